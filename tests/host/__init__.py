"""Tests of skillwire.host: approvals, caches, framing, search, the model tools (no processes)."""
