"""The client side against servers that hang, flood, break off or send invalid answers (issue 11 items 4,
5, 10; issue 10 item 7), over Streamable HTTP and stdio, with `tests/servers/faulty_server.py`.

Every fault costs the request it hits, within its bound (time, bytes), and comes out as a skillwire
`ServerError` subclass with a one-line message: never a hang, a foreign exception, or a traceback.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from servers import free_port, running_http_server
from servers.faulty_server import uri
from skillwire.client.connection import open_skills_client
from skillwire.client.limits import ClientLimits
from skillwire.client.transport import _environment_proxy
from skillwire.core.errors import (
    ConnectionLost,
    InvalidResponse,
    RequestTimeout,
    ResponseTooLarge,
    ServerError,
)
from skillwire.host.host import SkillHost
from skillwire.host.policy import ApproveAll

pytestmark = pytest.mark.anyio

FAULTY = Path(__file__).resolve().parents[1] / "servers" / "faulty_server.py"
TRANSPORTS = ["http", "stdio"]
MB = 1024 * 1024


@contextmanager
def faulty(kind: str, tmp_path: Path, *args: str) -> Iterator[dict[str, Any]]:
    """Where the faulty server is, as keyword arguments of `open_skills_client` (HTTP: running until the end)."""
    if kind == "stdio":
        yield {"command": [sys.executable, str(FAULTY), "--stdio", *args]}
        return
    port = free_port()
    argv = [sys.executable, str(FAULTY), "--port", str(port), *args]
    with running_http_server(argv, port, tmp_path / f"faulty-{port}.out"):
        yield {"url": f"http://127.0.0.1:{port}/mcp"}


@contextmanager
def measured() -> Iterator[dict[str, float]]:
    """Wall time and the peak of Python allocations (tracemalloc) of the block."""
    figures: dict[str, float] = {}
    tracemalloc.start()
    start = time.monotonic()
    try:
        yield figures
    finally:
        figures["seconds"] = time.monotonic() - start
        figures["peak_mb"] = tracemalloc.get_traced_memory()[1] / MB
        tracemalloc.stop()


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    assert [r.getMessage() for r in caplog.records if r.exc_info or r.exc_text] == []


# -- one request ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_flood_for_a_small_file_is_refused_within_its_manifest_bound(kind: str, tmp_path: Path) -> None:
    """200 MB answered for a file listed as 75 bytes: refused after about 64 KiB, in bounded memory and time."""
    with faulty(kind, tmp_path, "--huge-mb", "200") as target:
        async with open_skills_client(**target, limits=ClientLimits(timeout=20)) as skills:
            entry = await skills.get_skill(uri("huge-read"))
            listed = entry.files[0]
            with measured() as figures, pytest.raises(ResponseTooLarge, match="over its bound of"):
                await skills.read_skill_uri(listed.uri, size=listed.size)
            # The connection stays usable after the refusal.
            assert (await skills.get_skill(uri("good"))).name == "good"
    assert figures["seconds"] < 5, figures
    assert figures["peak_mb"] < 8, figures


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_read_that_is_never_answered_times_out(kind: str, tmp_path: Path) -> None:
    with faulty(kind, tmp_path) as target:
        async with open_skills_client(**target, limits=ClientLimits(timeout=1)) as skills:
            start = time.monotonic()
            with pytest.raises(RequestTimeout, match=r"no answer to resources/read of .*hang-read.* within 1 s"):
                await skills.read_skill_uri(uri("hang-read"))
            assert time.monotonic() - start < 5
            assert (await skills.get_skill(uri("good"))).name == "good"


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_an_upstream_dying_mid_read_is_connection_lost(
    kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with faulty(kind, tmp_path) as target:
        async with open_skills_client(**target, limits=ClientLimits(timeout=10)) as skills:
            with pytest.raises(ConnectionLost) as caught:
                await skills.read_skill_uri(uri("die-read"))
            assert "\n" not in str(caught.value)
            if kind == "http":  # only that connection broke: the server goes on
                assert (await skills.get_skill(uri("good"))).name == "good"
            else:
                assert "exited with status 3" in str(caught.value)
                with pytest.raises(ConnectionLost):  # the stdio server is gone: every later request says so
                    await skills.get_skill(uri("good"))
    no_tracebacks(caplog)


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_answers_that_are_not_valid_are_one_line_invalid_response(
    kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with faulty(kind, tmp_path) as target:
        async with open_skills_client(**target, limits=ClientLimits(timeout=10)) as skills:
            with pytest.raises(InvalidResponse, match="not a valid MCP result") as caught:
                await skills.read_skill_uri(uri("bad-block"))
            assert "\n" not in str(caught.value)
            assert "pydantic" not in str(caught.value)
            if kind == "http":
                with pytest.raises(InvalidResponse, match="not a JSON-RPC message"):
                    await skills.read_skill_uri(uri("junk-line"))
            else:  # a stray stdout line is skipped (logged on one line); the answer after it is read
                data = (await skills.read_skill_uri(uri("junk-line"))).data
                assert data.startswith(b"---\nname: junk-line")
    no_tracebacks(caplog)


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_an_empty_file_sent_without_text_is_empty_only_when_listed_as_empty(kind: str, tmp_path: Path) -> None:
    """The Go SDK's skills server sends a 0-byte file as a block without `text`: accepted as b"" when the
    manifest lists it as 0 bytes (the digest of b"" is still checked by the caller), refused otherwise."""
    target_uri = uri("empty-file", "empty.txt")
    with faulty(kind, tmp_path) as target:
        async with open_skills_client(**target, limits=ClientLimits(timeout=10)) as skills:
            assert (await skills.read_skill_uri(target_uri, size=0)).data == b""
            with pytest.raises(InvalidResponse, match="not a valid MCP result"):
                await skills.read_skill_uri(target_uri)


# -- listings ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_listing_page_over_its_byte_bound_is_refused_unparsed(kind: str, tmp_path: Path) -> None:
    """One `skills/list` page of 200,000 entries (about 40 MB) against a 4 MiB page bound."""
    with faulty(kind, tmp_path, "--listing", "huge-page", "--entries", "200000") as target:
        limits = ClientLimits(timeout=20, max_response_bytes=4 * MB)
        async with open_skills_client(**target, limits=limits) as skills:
            with measured() as figures, pytest.raises(ResponseTooLarge, match="skills/list is over its bound"):
                await skills.list_skills()
    assert figures["seconds"] < 10, figures
    assert figures["peak_mb"] < 24, figures


async def test_a_listing_page_over_its_entry_cap_is_reported_not_read(tmp_path: Path) -> None:
    with faulty("stdio", tmp_path, "--listing", "huge-page", "--entries", "3000") as target:
        async with open_skills_client(**target, limits=ClientLimits(max_page_entries=1000)) as skills:
            listing = await skills.list_skills()
    assert listing.entries == ()
    assert listing.stopped_early is not None
    assert "3,000 entries, over the cap of 1,000" in listing.stopped_early


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_an_endless_chain_of_cursors_stops_at_the_caps(kind: str, tmp_path: Path) -> None:
    with faulty(kind, tmp_path, "--listing", "endless") as target:
        async with open_skills_client(**target) as skills:
            start = time.monotonic()
            listing = await skills.list_skills()
            assert time.monotonic() - start < 30
            assert (listing.pages, listing.stopped_early) == (100, "stopped after 100 pages")
            assert len(listing.entries) == 100
        async with open_skills_client(**target, limits=ClientLimits(max_entries=40)) as skills:
            listing = await skills.list_skills()
            assert len(listing.entries) == 40
            assert listing.stopped_early == "stopped at the cap of 40 entries in one listing"


# -- the host: several servers -----------------------------------------------------------------------------------


async def test_host_lists_servers_concurrently_and_a_hung_one_is_a_problem_not_a_block(tmp_path: Path) -> None:
    with (
        faulty("http", tmp_path, "--listing", "hang") as hung_http,
        faulty("http", tmp_path) as good_http,
    ):
        async with SkillHost(use_cache=False) as host:
            await host.add_server("good", good_http["url"], timeout=2)
            await host.add_server("hung-http", hung_http["url"], timeout=2)
            await host.add_server("hung-stdio", [*faulty_command("--listing", "hang")], timeout=2)
            await host.add_server("endless", [*faulty_command("--listing", "endless")], timeout=2)
            start = time.monotonic()
            skills = await host.list_skills()
            elapsed = time.monotonic() - start
    assert elapsed < 4, f"{elapsed:.1f} s: the two hung servers were not listed concurrently"
    by_origin: dict[str, int] = {}
    for skill in skills:
        by_origin[skill.ref.origin] = by_origin.get(skill.ref.origin, 0) + 1
    assert by_origin == {"good": 7, "endless": 100}
    problems = {label: [p.reason for p in found] for label, found in host.registry.problems.items()}
    assert problems["hung-http"] == ["listing failed: hung-http: no answer to skills/list within 2 s"]
    assert problems["hung-stdio"] == ["listing failed: hung-stdio: no answer to skills/list within 2 s"]
    assert problems["endless"] == ["stopped after 100 pages"]
    assert problems["good"] == []


def faulty_command(*args: str) -> list[str]:
    return [sys.executable, str(FAULTY), "--stdio", *args]


async def test_host_add_server_that_cannot_be_reached_is_a_skillwire_error() -> None:
    async with SkillHost(use_cache=False) as host:
        with pytest.raises(ConnectionLost, match=r"^nowhere: cannot connect: ConnectError"):
            await host.add_server("nowhere", f"http://127.0.0.1:{free_port()}/mcp", timeout=2)
        with pytest.raises(ServerError, match=r"^gone: cannot connect"):
            await host.add_server("gone", [sys.executable, "-c", "pass"], timeout=2)
        assert host.origins() == []


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_host_load_isolates_a_bad_answer_to_its_skill(kind: str, tmp_path: Path) -> None:
    """`SkillHost.load` of a skill whose answers are broken fails with a skillwire error for that skill;
    the next load on the same connection works, and the Go SDK's empty file is read (verified) as b""."""
    with faulty(kind, tmp_path) as target:
        server = target.get("url") or target["command"]
        async with SkillHost(policy=ApproveAll(), use_cache=False) as host:
            await host.add_server("faulty", server, timeout=2)
            await host.list_skills()
            for name, error in [("bad-block", InvalidResponse), ("huge-read", ResponseTooLarge)]:
                with pytest.raises(error):
                    await host.load("faulty", uri(name))
            with pytest.raises(RequestTimeout):
                await host.load("faulty", uri("hang-read"))
            empty = await host.load("faulty", uri("empty-file"))
            assert await empty.read_bytes("empty.txt") == b""
            good = await host.load("faulty", uri("good"))
            assert (await good.read("references/guide.md")).text.startswith("# Guide")


def test_the_guarded_http_client_keeps_the_environment_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """An explicit httpx2 transport gets no proxy from the environment by itself; the guarded one asks for it."""
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert _environment_proxy("https://skills.example.com/mcp") == "http://proxy.invalid:3128"
    assert _environment_proxy("http://127.0.0.1:8765/mcp") is None
