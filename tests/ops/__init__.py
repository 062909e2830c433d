"""Tests of skillwire.ops: metrics, logs and traces."""
