"""End to end: every module here starts processes or servers (marked `e2e` by tests/conftest.py)."""
