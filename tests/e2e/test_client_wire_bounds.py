"""`SkillHost.attach_client` with the caller's own `mcp` `Client`, built over `WireBounds` transports.

The server is tests/servers/faulty_server.py (a hand-written server that misbehaves on the wire),
over HTTP on 127.0.0.1 and over stdio: a file listed as 75 bytes is answered with 200 MB. Through the
caller's client built on `WireBounds` the answer is refused after about its manifest bound, in
bounded memory, as through `add_server`; the same client built on plain SDK transports has no wire
bound, which is what `bounds=` is for.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from servers import free_port, running_http_server
from servers.faulty_server import uri
from skillwire import ApproveAll, ClientLimits, ResponseTooLarge, SkillHost, WireBounds

FAULTY = Path(__file__).resolve().parents[1] / "servers" / "faulty_server.py"
MB = 1024 * 1024

pytestmark = pytest.mark.anyio


@contextmanager
def faulty_http(tmp_path: Path, *args: str) -> Iterator[str]:
    port = free_port()
    argv = [sys.executable, str(FAULTY), "--port", str(port), *args]
    with running_http_server(argv, port, tmp_path / f"faulty-{port}.out"):
        yield f"http://127.0.0.1:{port}/mcp"


@asynccontextmanager
async def own_client(kind: str, tmp_path: Path, bounds: WireBounds) -> AsyncIterator[Client]:
    """The caller's own SDK client, its transport made from `bounds`."""
    if kind == "stdio":
        async with Client(bounds.stdio([sys.executable, str(FAULTY), "--stdio", "--huge-mb", "200"])) as client:
            yield client
        return
    with faulty_http(tmp_path, "--huge-mb", "200") as url:
        async with bounds.http_client(url) as http:
            transport = streamable_http_client(url, http_client=http, max_sse_event_size=bounds.largest_answer)
            async with Client(transport) as client:
                yield client


@pytest.mark.parametrize("kind", ["http", "stdio"])
async def test_a_flood_through_the_callers_own_client_is_refused_within_its_bound(kind: str, tmp_path: Path) -> None:
    bounds = WireBounds(ClientLimits(timeout=20))
    async with own_client(kind, tmp_path, bounds) as client, SkillHost(policy=ApproveAll()) as host:
        skills = await host.attach_client("faulty", client, bounds=bounds)
        listed = (await skills.get_skill(uri("huge-read"))).files[0]
        tracemalloc.start()
        started = time.monotonic()
        try:
            with pytest.raises(ResponseTooLarge, match="over its bound of"):
                await skills.read_skill_uri(listed.uri, size=listed.size)
            seconds, peak = time.monotonic() - started, tracemalloc.get_traced_memory()[1] / MB
        finally:
            tracemalloc.stop()
        assert seconds < 5
        assert peak < 8  # 200 MB were sent; about 64 KiB were read
        assert (await skills.get_skill(uri("good"))).name == "good"  # the connection is still usable


async def test_without_bounds_the_callers_client_reads_the_whole_answer(tmp_path: Path) -> None:
    """Why `bounds=` exists: over the SDK's plain transport the 5 MB answer for a 75-byte file arrive
    whole before anything can look at them (refused afterwards, by the size check)."""
    with faulty_http(tmp_path, "--huge-mb", "5") as url:
        async with Client(streamable_http_client(url)) as client, SkillHost(policy=ApproveAll()) as host:
            skills = await host.attach_client("faulty", client)
            listed = (await skills.get_skill(uri("huge-read"))).files[0]
            answer = await skills.read_skill_uri(listed.uri, size=listed.size)
    assert len(answer.data) >= 5 * MB  # the client held all of it


async def test_bounds_misused_are_refused(tmp_path: Path) -> None:
    bounds = WireBounds()
    with faulty_http(tmp_path) as url:
        async with Client(streamable_http_client(url)) as client, SkillHost(policy=ApproveAll()) as host:
            with pytest.raises(ValueError, match="no transport was made from these WireBounds"):
                await host.attach_client("plain", client, bounds=bounds)
            async with bounds.http_client(url) as http, Client(streamable_http_client(url, http_client=http)) as own:
                await host.attach_client("own", own, bounds=bounds)
                with pytest.raises(ValueError, match="one WireBounds per Client"):
                    await host.attach_client("again", own, bounds=bounds)
    with pytest.raises(ValueError, match="the server command is empty"):
        WireBounds().stdio([])
