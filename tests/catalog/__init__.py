"""Tests of skillwire.catalog: discovery, scans, snapshots, digests, bad input, safe opening (no processes)."""
