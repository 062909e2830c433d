"""Tests of skillwire.server: the extension on the SDK in process, the socket, the watcher (no processes)."""
