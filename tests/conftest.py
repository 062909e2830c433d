"""Shared pytest configuration."""

from __future__ import annotations

import os
import tempfile

import pytest

# Tests (and the servers and clients they start as subprocesses, which inherit the environment) must
# never read or write the real user's approvals, digest cache or content cache.
_STATE = tempfile.mkdtemp(prefix="skillwire-test-home-")
for _variable in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
    os.environ[_variable] = os.path.join(_STATE, _variable.lower())


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Async tests (`@pytest.mark.anyio`) run on asyncio only; session scope allows wider async fixtures."""
    return "asyncio"
