"""Fixtures more than one end-to-end module takes: defined once here, under names no module's own fixture uses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from servers import LyingServer, running_lying_server
from support.gitserver import GitHTTPServer, git_http_server
from support.servers import EXAMPLES, serve_http


@pytest.fixture
def own_cache_env(tmp_path: Path) -> dict[str, str]:
    """A cache and a config of this test's own for the commands and servers it starts (the user cache and
    config directories follow XDG_CACHE_HOME and XDG_CONFIG_HOME): nothing shared with another test."""
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


@pytest.fixture
def git_server(tmp_path: Path) -> Iterator[GitHTTPServer]:
    """A real `git http-backend` on 127.0.0.1 serving every bare repository under `tmp_path/served`."""
    (tmp_path / "served").mkdir()
    with git_http_server(tmp_path / "served") as running:
        yield running


@pytest.fixture(scope="module")
def examples_url() -> Iterator[str]:
    """`skillwire serve` of the example skills over HTTP, one per test module (no watcher, no digest cache)."""
    with serve_http([str(EXAMPLES), "--no-watch", "--no-digest-cache"]) as server:
        yield server.url


@pytest.fixture(scope="module")
def lying(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LyingServer]:
    """The lying server (tests/servers/lying_server_cli.py), one per test module."""
    with running_lying_server(tmp_path_factory.mktemp("lying")) as server:
        yield server
