"""Tests of skillwire.bridge that need no process: its configuration."""
