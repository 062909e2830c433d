"""Shared pytest configuration."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Async tests (`@pytest.mark.anyio`) run on asyncio only; session scope allows wider async fixtures."""
    return "asyncio"
