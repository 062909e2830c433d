"""Client-side measurements against a running server over HTTP.

Server-side costs (listing, pages, skills/get, resources/read) are measured with `RawClient`: 2026-07-28
JSON-RPC over one keep-alive HTTP connection, parsed with `json.loads`, so the client's own work is small
and the same for every peer (the SDK client validates every message against the whole JSON-RPC union,
which costs more than a skills/get server-side and would flatten every ratio). Host loads go through
skillwire's `SkillHost` and the SDK client, as a host would.

Every measurement takes a time budget. A sampled measurement (pages, skills/get, reads) stops early at
its budget and reports how many samples it got; one that got none, or a single-shot measurement that
ran out of time, returns a `status` value ("timed out") instead of a number. Requests are sent with
`RawClient`, or `send_raw` / `session.read_resource` below the SDK client's response cache, so nothing
is served from a client-side cache unless the measurement is about that cache.
"""

from __future__ import annotations

import base64
import gc
import json
import math
import os
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import anyio
import httpx2
from mcp.client import Client
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from skillwire.client.requests import get_skill_request, send_raw
from skillwire.host.approvals import ApprovalStore
from skillwire.host.cache import ContentCache
from skillwire.host.host import SkillHost
from skillwire.host.policy import ApproveAll

MB = 1_000_000
SMALL_MAX = 16_000  # a "small" file: under 16 KB
LARGE_MIN = 50_000  # a "large" file: 50 KB or more

Value = float | int | dict[str, Any]


def status(kind: str, reason: str, **extra: Any) -> dict[str, Any]:
    """A metric that is not a number: "timed out", "skipped", "n/a" or "failed", and why."""
    return {"status": kind, "reason": reason, **extra}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


async def sample(count: int, budget: float, one: Callable[[int], Awaitable[None]]) -> list[float]:
    """Time `one(i)` for i in range(count), stopping when `budget` seconds have passed.

    The benchmark process holds whole listings by now; its own cyclic-GC passes over them would land
    in a server's tail latency, so they are frozen first (the same for every peer).
    """
    gc.collect()
    gc.freeze()
    times: list[float] = []
    started = time.perf_counter()
    with anyio.move_on_after(budget):
        for index in range(count):
            if time.perf_counter() - started > budget:
                break
            began = time.perf_counter()
            await one(index)
            times.append(time.perf_counter() - began)
    return times


PROTOCOL_VERSION = "2026-07-28"


class RawClient:
    """2026-07-28 JSON-RPC requests over one keep-alive HTTP/1.1 connection, without the SDK.

    Each request carries what the SDK client would send on the modern wire (the `_meta` protocol
    envelope, `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` for resources/read); the answer is
    taken from a JSON body or, if a server streams it, from the SSE `data:` line.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._next_id = 0
        self._http = httpx2.AsyncClient(timeout=httpx2.Timeout(120.0))

    async def __aenter__(self) -> RawClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._http.aclose()

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        meta = {
            PROTOCOL_VERSION_META_KEY: PROTOCOL_VERSION,
            CLIENT_INFO_META_KEY: {"name": "skillwire-bench", "version": "0"},
            CLIENT_CAPABILITIES_META_KEY: {},
        }
        body = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": {**params, "_meta": meta}}
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
            "Mcp-Method": method,
        }
        if method == "resources/read":
            headers["Mcp-Name"] = str(params["uri"])
        response = await self._http.post(self.url, content=json.dumps(body).encode(), headers=headers)
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
        try:
            message = json.loads(text)
        except ValueError:
            raise RuntimeError(f"{method}: HTTP {response.status_code}, not JSON-RPC: {text[:200]!r}") from None
        if "error" in message:
            raise RuntimeError(f"{method}: HTTP {response.status_code}: {message['error']}")
        result: dict[str, Any] = message["result"]
        return result

    async def list_page(self, cursor: str | None) -> dict[str, Any]:
        return await self.call("skills/list", {} if cursor is None else {"cursor": cursor})

    async def read(self, uri: str) -> bytes:
        block = (await self.call("resources/read", {"uri": uri}))["contents"][0]
        if isinstance(block.get("text"), str):
            return str(block["text"]).encode("utf-8")
        return base64.b64decode(block.get("blob", ""))


async def read_bytes(client: Client, uri: str) -> bytes:
    """One resources/read, decoded (text as UTF-8, blob from base64), no verification."""
    result = await client.session.read_resource(uri)
    block = result.contents[0]
    text = getattr(block, "text", None)
    if isinstance(text, str):
        return text.encode("utf-8")
    return base64.b64decode(getattr(block, "blob", ""))


def latencies(name: str, times: list[float], timed_out: str) -> dict[str, Value]:
    """`<name>_p50_ms`, `<name>_p99_ms` and `<name>_samples`, or a "timed out" status without samples."""
    if not times:
        return {f"{name}_p50_ms": status("timed out", timed_out)}
    return {
        f"{name}_p50_ms": statistics.median(times) * 1e3,
        f"{name}_p99_ms": percentile(times, 0.99) * 1e3,
        f"{name}_samples": len(times),
    }


# -- skills/list ---------------------------------------------------------------------------------------------


@dataclass
class Listing:
    seconds: float | None = None  # None: timed out
    elapsed: float = 0.0
    pages: int = 0
    entries: list[dict[str, Any]] = field(default_factory=list)
    cursors: list[str | None] = field(default_factory=list)


async def list_all(url: str, *, budget: float, repeats: int) -> tuple[Listing, list[float]]:
    """Page through the whole skills/list `repeats` times (stopping at `budget` in total).

    Returns the last complete listing (or the partial one that ran out of time) and the time of each
    complete pass.
    """
    passes: list[float] = []
    last = Listing()
    started = time.perf_counter()
    async with RawClient(url) as client:
        with anyio.move_on_after(budget):
            for _ in range(repeats):
                if passes and time.perf_counter() - started + passes[-1] > budget:
                    break
                current = Listing(cursors=[None])
                last = current
                cursor: str | None = None
                began = time.perf_counter()
                while True:
                    page = await client.list_page(cursor)
                    current.pages += 1
                    current.entries.extend(page.get("skills") or [])
                    current.elapsed = time.perf_counter() - began
                    cursor = page.get("nextCursor") or None
                    if cursor is None:
                        break
                    current.cursors.append(cursor)
                current.seconds = time.perf_counter() - began
                passes.append(current.seconds)
    return last, passes


async def page_cost(url: str, cursors: list[str | None], *, samples: int, budget: float) -> dict[str, Value]:
    """One skills/list page at random positions (seeded): p50 and p99 in ms."""
    rng = random.Random(1)
    chosen = [rng.choice(cursors) for _ in range(samples)]
    async with RawClient(url) as client:
        await client.list_page(chosen[0])  # warm the connection

        async def one(index: int) -> None:
            await client.list_page(chosen[index])

        times = await sample(samples, budget, one)
    return latencies("page", times, f"no page within {budget:.0f} s")


# -- skills/get ------------------------------------------------------------------------------------------------


async def get_latency(url: str, uris: list[str], *, budget: float) -> dict[str, Value]:
    async with RawClient(url) as client:
        await client.call("skills/get", {"uri": uris[0]})

        async def one(index: int) -> None:
            result = await client.call("skills/get", {"uri": uris[index]})
            if result.get("skill", {}).get("uri") != uris[index]:
                raise AssertionError(f"skills/get {uris[index]} answered {result!r:.200}")

        times = await sample(len(uris), budget, one)
    return latencies("get", times, f"no skills/get answer within {budget:.0f} s")


# -- resources/read ---------------------------------------------------------------------------------------------


async def read_latency(url: str, files: list[tuple[str, int]], label: str, *, budget: float) -> dict[str, Value]:
    """resources/read of each (uri, size): p50/p99 latency in ms and throughput in MB/s."""
    if not files:
        return {f"read_{label}_p50_ms": status("n/a", f"the catalog has no {label} files")}
    async with RawClient(url) as client:
        await client.read(files[0][0])

        async def one(index: int) -> None:
            uri, size = files[index]
            data = await client.read(uri)
            if len(data) != size:
                raise AssertionError(f"{uri}: read {len(data)} bytes, the manifest says {size}")

        times = await sample(len(files), budget, one)
    metrics = latencies(f"read_{label}", times, f"no resources/read answer within {budget:.0f} s")
    if times:
        total = sum(size for _, size in files[: len(times)])
        metrics[f"read_{label}_MBps"] = total / sum(times) / MB
    return metrics


# -- loading one skill ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadTarget:
    uri: str
    files: tuple[tuple[str, int], ...]  # (uri, size), SKILL.md included

    @property
    def total(self) -> int:
        return sum(size for _, size in self.files)


@dataclass(frozen=True)
class Timing:
    seconds: float  # wall time
    cpu: float  # this process's CPU time (the client side) over the same span
    requests: int  # requests sent during it


async def load_unverified(url: str, target: LoadTarget) -> Timing:
    """skills/get, then a resources/read of every file; nothing hashed or checked but the total size."""
    async with Client(url) as client:
        began, cpu = time.perf_counter(), time.process_time()
        await send_raw(client, get_skill_request(target.uri))
        total = 0
        for uri, _ in target.files:
            total += len(await read_bytes(client, uri))
        timing = Timing(time.perf_counter() - began, time.process_time() - cpu, len(target.files) + 1)
    if total != target.total:
        raise AssertionError(f"unverified load read {total} bytes, expected {target.total}")
    return timing


async def skillwire_load(
    url: str, target: LoadTarget, state: Path, *, cache: bool, listed: bool = False, repeats: int = 1
) -> list[Timing]:
    """SkillHost: load the skill (approval, SKILL.md verified) and read every other file verified.

    `state` holds the approvals database (and the content cache when `cache`): reuse it for a skill
    already approved, or a warm cache. Without `listed`, the host has not listed the server, so `load`
    confirms the skill with skills/get (as FastMCP's read_skill does). With `listed`, the host lists the
    server first (not timed) and then loads `repeats` times.
    """
    state.mkdir(parents=True, exist_ok=True)
    out: list[Timing] = []
    with ApprovalStore(state / "approvals.sqlite") as approvals:
        content = ContentCache(state / "cache", discovery_paths=[]) if cache else None
        async with SkillHost(policy=ApproveAll(), approvals=approvals, cache=content, use_cache=cache) as host:
            client = await host.add_server("bench", url)
            if listed:
                await host.list_skills()
            for _ in range(repeats):
                sent = len(client.requests)
                began, cpu = time.perf_counter(), time.process_time()
                skill = await host.load("bench", target.uri)
                total = len(skill.instructions.text.encode("utf-8"))
                for uri, _ in target.files:
                    if uri != target.uri:
                        total += len(await skill.read_bytes(uri))
                out.append(Timing(time.perf_counter() - began, time.process_time() - cpu, len(client.requests) - sent))
                skill.close()
                if total != target.total:
                    raise AssertionError(f"SkillHost load read {total} bytes, expected {target.total}")
    return out


def _count_requests(session: Any) -> list[int]:
    """Count what a FastMCP client's session sends (cache hits never reach `send_request`)."""
    counter = [0]
    original = session.send_request

    async def counting(*args: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        return await original(*args, **kwargs)

    setattr(session, "send_request", counting)  # noqa: B010 (an instance attribute over the method)
    return counter


async def fastmcp_read_skill_twice(url: str, target: LoadTarget) -> tuple[Timing, Timing]:
    """FastMCP's `Client.read_skill` twice on one client with FastMCP's response cache on (`cache=True`).

    read_skill sends skills/get, reads every file, verifies sizes, digests and frontmatter, and builds a
    `Skill`. FastMCP has no content cache: the response cache is all the caching it offers, so the
    second call is its load "from cache".
    """
    from fastmcp import Client as FastMCPClient
    from fastmcp.skills import SkillsClientExtension

    timings: list[Timing] = []
    async with FastMCPClient(url, extensions=[SkillsClientExtension()], cache=True) as client:
        counter = _count_requests(client.session)
        for _ in range(2):
            sent = counter[0]
            began, cpu = time.perf_counter(), time.process_time()
            skill = await client.read_skill(target.uri)
            timings.append(Timing(time.perf_counter() - began, time.process_time() - cpu, counter[0] - sent))
            total = sum(len(data) for data in skill.files.values())
            if total != target.total or len(skill.files) != len(target.files):
                raise AssertionError(f"read_skill returned {len(skill.files)} files / {total} bytes")
    return timings[0], timings[1]


# -- the watcher ------------------------------------------------------------------------------------------------


def disk_path_of(root: Path, uri: str) -> Path:
    """The file on disk that `skill://<path>` publishes, for a catalog served from `root`."""
    return root / unquote(uri.removeprefix("skill://"))


async def edit_visible(
    url: str, skill_uri: str, file_uri: str, path: Path, *, budget: float, arm: float = 0.5
) -> Value:
    """Change one file, then poll skills/get (every 10 ms) until its digest changes: seconds.

    The file's bytes and mtime are restored afterwards, and (best effort) the server is given time to
    see the original again.
    """

    def digest_of(entry: dict[str, Any]) -> str | None:
        for item in entry.get("skill", {}).get("resources", []):
            if item.get("uri") == file_uri:
                return str(item.get("digest"))
        return None

    original = path.read_bytes()
    stat = path.stat()
    if not original:
        return status("n/a", f"{file_uri} is empty")
    # Same size (one ASCII byte near the end changed): a skill at the 16 MiB limit must stay within it.
    index = len(original) - 1
    while index > 0 and original[index] >= 0x80:
        index -= 1
    edited = original[:index] + (b"x" if original[index : index + 1] != b"x" else b"y") + original[index + 1 :]
    async with Client(url) as client:
        before = digest_of(await send_raw(client, get_skill_request(skill_uri)))
        if before is None:
            return status("failed", f"{file_uri} is not in the entry of {skill_uri}")
        await anyio.sleep(arm)  # let a watcher settle
        seen: float | None = None
        began = time.perf_counter()
        path.write_bytes(edited)
        try:
            with anyio.move_on_after(budget):
                while True:
                    if digest_of(await send_raw(client, get_skill_request(skill_uri))) != before:
                        seen = time.perf_counter() - began
                        break
                    await anyio.sleep(0.01)
        finally:
            path.write_bytes(original)
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        with anyio.move_on_after(min(budget, 30)):
            while seen is not None and digest_of(await send_raw(client, get_skill_request(skill_uri))) != before:
                await anyio.sleep(0.05)
    if seen is None:
        return status("timed out", f"the edit did not show in skills/get within {budget:.0f} s")
    return seen


# -- several servers measured side by side -------------------------------------------------------------------


def server_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system, every thread) the process `pid` has used so far, or None off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Interleaved:
    """Per-peer request times of one interleaved measurement, and what each peer's server spent on them."""

    times: dict[str, list[float]]
    cpu_ms: dict[str, float | None]  # server CPU ms per request (user + system), None when unknown
    failed: dict[str, str]  # peer -> why it dropped out
    # The same, per block of consecutive rounds (`blocks`): how much a per-request CPU figure moves between
    # parts of one measurement, so a difference between peers can be told from that noise.
    cpu_ms_blocks: dict[str, list[float]] = field(default_factory=dict)


async def interleave(
    clients: dict[str, RawClient],
    pids: dict[str, int],
    count: int,
    budget: float,
    one: Callable[[str, RawClient, int], Awaitable[None]],
    *,
    blocks: int = 1,
) -> Interleaved:
    """`one(peer, client, i)` for i in range(count), each round visiting every peer once in a fresh random order.

    On a shared machine the load drifts over minutes; measured one after the other, peers see different
    loads, and a ratio of their latencies measures the drift as much as the servers. Side by side, round by
    round, every peer sees the same load. A peer whose request fails drops out (with the reason), the rest go
    on. Stops at `budget` seconds for all peers. Each server's CPU is also read after each of `blocks`
    equal runs of rounds (`Interleaved.cpu_ms_blocks`).
    """
    gc.collect()
    gc.freeze()  # as in `sample`
    rng = random.Random(3)
    times: dict[str, list[float]] = {peer: [] for peer in clients}
    failed: dict[str, str] = {}
    before = {peer: server_cpu_s(pid) for peer, pid in pids.items()}
    blocks = max(1, min(blocks, count))
    ends = {count * (b + 1) // blocks for b in range(blocks)}  # the round after which a block ends
    block_start = dict(before)
    block_done = {peer: 0 for peer in clients}
    cpu_ms_blocks: dict[str, list[float]] = {peer: [] for peer in clients}

    def close_block() -> None:
        for peer, pid in pids.items():
            first, now = block_start.get(peer), server_cpu_s(pid)
            done = len(times.get(peer, [])) - block_done[peer]
            if first is not None and now is not None and done and peer not in failed:
                cpu_ms_blocks[peer].append((now - first) / done * 1e3)
            block_start[peer], block_done[peer] = now, len(times.get(peer, []))

    started = time.perf_counter()
    with anyio.move_on_after(budget):
        for index in range(count):
            if index in ends and index:
                close_block()
            if time.perf_counter() - started > budget:
                break
            order = [peer for peer in clients if peer not in failed]
            if not order:
                break
            rng.shuffle(order)
            for peer in order:
                began = time.perf_counter()
                try:
                    await one(peer, clients[peer], index)
                except Exception as exc:
                    failed[peer] = f"{type(exc).__name__}: {exc}"[:300]
                    continue
                times[peer].append(time.perf_counter() - began)
    if blocks > 1:
        close_block()
    cpu_ms: dict[str, float | None] = {}
    for peer, pid in pids.items():
        first, now, done = before.get(peer), server_cpu_s(pid), len(times.get(peer, []))
        cpu_ms[peer] = (now - first) / done * 1e3 if first is not None and now is not None and done else None
    return Interleaved(times, cpu_ms, failed, cpu_ms_blocks if blocks > 1 else {})
