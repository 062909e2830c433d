"""The benchmark suite: skillwire vs FastMCP 4.2 and the TypeScript SDK 2.4.0, over Streamable HTTP on 127.0.0.1.

    .venv/bin/python -m bench.run [--catalogs corpus,300,1000,10000,limits]
                                  [--peers skillwire,fastmcp,typescript,floor,floor-onepass
                                           | obs-off,obs-metrics,obs-logs,obs-control]
                                  [--quick] [--workdir DIR] [--json FILE] [--png FILE]
                                  [--list-repeats N] [--get-samples N]

For every catalog, in one run, on the same files:
  - the machine's limits: hashlib SHA-256 throughput, and a bare Python loop reading and hashing
    every file of the catalog; for the cold-start ratio, the same loop with the walk, as a process of
    its own (start to exit, wall and CPU), run right before each cold start so both see the same load;
  - for each peer, as a subprocess on a port the kernel picks: process start → first skills/list
    answer (skillwire cold with --no-digest-cache, and again after a start that warmed a --digest-cache file); the
    whole skills/list; one page at random positions; skills/get p50/p99; resources/read latency and
    MB/s for small (< 16 KB) and large (≥ 50 KB) files; one skill (the catalog's largest) loaded and
    every file read and verified by a host (skillwire's SkillHost / FastMCP's Client.read_skill), cold
    and from cache, against the same reads unverified; the server's peak RSS (VmHWM); the time for an
    edit to show in skills/get (skillwire's watcher / FastMCP's reload=True).

Catalogs: N (a number: N generated skills × 10 files, most a few KB, ~2% 50–500 KB, ~1% binary),
`limits` (one skill of 512 files and exactly 16 MiB), `corpus` (../shared/corpora/awesome-copilot/skills,
copied into the work dir; skipped when absent). Generated catalogs are kept in the work dir and reused.

Two more peers are measured with the same client on the same workload: `typescript` (the TypeScript
SDK 2.4.0's `ext/skills` filesystem loader and HTTP handler on Node 22; skipped with the reason when
`.tools/` lacks it) and `floor` (the `mcp` SDK stack skillwire runs on, answering every request from
precomputed dicts: what a request costs before skillwire does anything). For them the host-load and
watcher rows are n/a: they have no host library and no watcher.

The whole listing, page, skills/get and resources/read latencies of skillwire, typescript and floor are
measured side by side: each peer's server is kept running after its own measurements, and then every
sample goes to each of them in turn, in a random order per round. On a shared machine the load drifts
over minutes; measured one peer after the other, a latency ratio between peers measured the drift as
much as the servers. Each of these measurements also records each server's CPU time per request.

Prints a table (every peer, skillwire's advantage over each, targets with PASS/MISS) and writes the raw
numbers as JSON and a PNG chart. FastMCP measurements have time budgets: past one, the value is recorded
as "timed out" (with what was done), never waited for.
"""

from __future__ import annotations

import argparse
import atexit
import json
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any, TypeGuard

import anyio

from bench import machine
from bench.generate import catalog_stats, generate_catalog, generate_limits_skill, generate_refs_catalog
from bench.measure import (
    LARGE_MIN,
    SMALL_MAX,
    LoadTarget,
    RawClient,
    Timing,
    Value,
    disk_path_of,
    edit_visible,
    fastmcp_read_skill_twice,
    get_latency,
    interleave,
    latencies,
    list_all,
    load_unverified,
    page_cost,
    read_latency,
    skillwire_load,
    status,
)
from bench.peers import (
    PEERS,
    REPO_ROOT,
    Server,
    Started,
    StartFailed,
    StartTimedOut,
    fastmcp_argv,
    floor_argv,
    skillwire_argv,
    start,
    stop_all,
    typescript_argv,
    typescript_missing,
)

CORPUS = REPO_ROOT.parent / "shared" / "corpora" / "awesome-copilot" / "skills"
DEFAULT_CATALOGS = "corpus,300,1000,10000,limits"
DEFAULT_JSON = REPO_ROOT / "bench" / "results" / "bench.json"
DEFAULT_PNG = REPO_ROOT / "docs" / "bench.png"
PAGE_SIZE = 100


@dataclass(frozen=True)
class Settings:
    list_repeats: int = 5  # whole listings per peer, after one warm-up walk each (a JIT peer is measured warm)
    page_samples: int = 200
    get_samples: int = 1000
    small_reads: int = 300
    large_reads: int = 40
    load_repeats: int = 9
    start_repeats: int = 3
    skillwire_start_budget: float = 300.0
    fastmcp_start_budget: float = 120.0
    skillwire_budget: float = 60.0  # per sampled measurement
    fastmcp_budget: float = 20.0
    fastmcp_list_budget: float = 90.0
    fastmcp_load_budget: float = 45.0
    watch_budget: float = 60.0
    reload_server_max_start: float = 60.0  # FastMCP's reload server is skipped when its start took longer


QUICK = Settings(
    list_repeats=1,
    page_samples=10,
    get_samples=30,
    small_reads=20,
    large_reads=5,
    load_repeats=2,
    start_repeats=1,
    skillwire_start_budget=60.0,
    fastmcp_start_budget=60.0,
    skillwire_budget=10.0,
    fastmcp_budget=10.0,
    fastmcp_list_budget=20.0,
    fastmcp_load_budget=20.0,
    watch_budget=20.0,
    reload_server_max_start=60.0,
)

# (key, label, unit, which is better). Every metric appears for both peers: a number or a status.
METRICS: list[tuple[str, str, str, str]] = [
    ("start_first_list_s", "start → first skills/list (cold)", "s", "lower"),
    # The key predates the persisted snapshot; a restart with the cache now serves it (catalog/persist.py).
    ("restart_digest_cache_s", "restart (snapshot + digest cache) → first list", "s", "lower"),
    ("cold_start_vs_loop", "cold start ÷ bare read+hash loop", "×", "lower"),
    ("list_all_s", "whole skills/list (all pages)", "s", "lower"),
    ("page_p50_ms", "skills/list page p50", "ms", "lower"),
    ("page_p99_ms", "skills/list page p99", "ms", "lower"),
    ("get_p50_ms", "skills/get p50", "ms", "lower"),
    ("get_p99_ms", "skills/get p99", "ms", "lower"),
    ("read_small_p50_ms", "resources/read < 16 KB p50", "ms", "lower"),
    ("read_small_p99_ms", "resources/read < 16 KB p99", "ms", "lower"),
    ("read_small_MBps", "resources/read < 16 KB throughput", "MB/s", "higher"),
    ("read_large_p50_ms", "resources/read ≥ 50 KB p50", "ms", "lower"),
    ("read_large_MBps", "resources/read ≥ 50 KB throughput", "MB/s", "higher"),
    ("load_unverified_s", "1 skill: get + reads, unverified", "s", "lower"),
    ("load_verified_s", "1 skill: verified (approved, no cache)", "s", "lower"),
    ("verify_overhead_pct", "verified vs unverified", "%", "lower"),
    ("load_cold_s", "1 skill: first load (approve+verify+cache)", "s", "lower"),
    ("load_cached_s", "1 skill: load from the cache", "s", "lower"),
    ("load_cached_requests", "requests for a load from cache", "", "lower"),
    ("peak_rss_mb", "server peak RSS", "MB", "lower"),
    # VmHWM at the first skills/list answer: skillwire's first start with its caches on (it writes the
    # snapshot) and its restart from them; the other peers' one start.
    ("start_peak_rss_mb", "peak RSS at first skills/list (cold, caches on)", "MB", "lower"),
    ("restart_peak_rss_mb", "peak RSS at first skills/list (warm restart)", "MB", "lower"),
    ("watch_visible_s", "edit → visible in skills/get", "s", "lower"),
]
NO_RATIO = {"verify_overhead_pct", "load_cached_requests"}
CPU_ROWS = [
    ("list", "whole listing"),
    ("page", "skills/list page"),
    ("get", "skills/get"),
    ("read_small", "read < 16 KB"),
    ("read_large", "read ≥ 50 KB"),
]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


# -- catalogs -------------------------------------------------------------------------------------------------------


def prepare_catalog(name: str, workdir: Path) -> tuple[Path | None, str]:
    """The catalog's root (generated or copied into the work dir, reused) or None and why it is skipped."""
    root = workdir / f"catalog-{name}"
    if name == "limits":
        return generate_limits_skill(root), "one skill at the limits (512 files, 16 MiB)"
    if name == "corpus":
        if not CORPUS.is_dir():
            return None, f"{CORPUS} is absent"
        marker = root / ".complete-corpus"
        if not marker.exists():
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(CORPUS, root, symlinks=True)
            marker.touch()
        return root, "awesome-copilot skills (copied)"
    if name.endswith("-refs") and name[: -len("-refs")].isdigit():
        count = int(name[: -len("-refs")])
        return generate_refs_catalog(root, count), f"{count:,} skills × 9 files of 1–8 KB (references/, scripts/)"
    if name.isdigit():
        count = int(name)
        return generate_catalog(root, count, large=True), f"{count:,} generated skills × 10 files"
    raise SystemExit(f"unknown catalog {name!r}: use a number, 'limits' or 'corpus'")


@dataclass
class Workload:
    """What both peers are asked for on one catalog: the same URIs, chosen once (seeded)."""

    skills: int
    get_uris: list[str]
    small: list[tuple[str, int]]
    large: list[tuple[str, int]]
    load: LoadTarget
    watch_skill: str
    watch_file: str
    watch_path: Path


def make_workload(
    entries: list[dict[str, Any]], root: Path, settings: Settings, *, one_small_file: bool = False
) -> Workload:
    """`one_small_file`: the small reads are one file read again and again (the refs shape: a host
    re-reading the same reference), not a sample across the catalog."""
    rng = random.Random(2)
    uris = sorted(str(entry["uri"]) for entry in entries)
    by_uri = {str(entry["uri"]): entry for entry in entries}
    files = sorted((str(item["uri"]), int(item["size"])) for entry in entries for item in entry.get("resources") or [])
    small = [f for f in files if f[1] < SMALL_MAX]
    large = [f for f in files if f[1] >= LARGE_MIN]

    def total(entry: dict[str, Any]) -> int:
        return sum(int(item["size"]) for item in entry.get("resources") or [])

    biggest = max(entries, key=lambda e: (total(e), str(e["uri"])))
    load = LoadTarget(
        str(biggest["uri"]), tuple((str(i["uri"]), int(i["size"])) for i in biggest.get("resources") or [])
    )
    watch_skill = uris[len(uris) // 2]
    watch_file = watch_skill
    for item in sorted(by_uri[watch_skill].get("resources") or [], key=lambda i: (int(i["size"]), str(i["uri"]))):
        path = disk_path_of(root, str(item["uri"]))
        if item["uri"] != watch_skill and path.is_file() and path.stat().st_size == int(item["size"]):
            watch_file = str(item["uri"])
            break
    return Workload(
        skills=len(uris),
        get_uris=[rng.choice(uris) for _ in range(settings.get_samples)],
        small=[rng.choice(small)] * settings.small_reads
        if one_small_file and small
        else rng.sample(small, min(len(small), settings.small_reads)),
        large=rng.sample(large, min(len(large), settings.large_reads)),
        load=load,
        watch_skill=watch_skill,
        watch_file=watch_file,
        watch_path=disk_path_of(root, watch_file),
    )


# -- running one peer ------------------------------------------------------------------------------------------------


class PeerRun:
    """Collects one peer's metrics on one catalog; a failing measurement becomes a status, not a crash."""

    def __init__(self, catalog: str, peer: str) -> None:
        self.catalog = catalog
        self.peer = peer
        self.metrics: dict[str, Value] = {}
        self.extra: dict[str, Any] = {}

    def set(self, key: str, value: Value) -> None:
        self.metrics[key] = value
        shown = f"{value:.4g}" if isinstance(value, float) else str(value)
        log(f"  [{self.catalog}] {self.peer}: {key} = {shown}")

    async def guard(self, keys: list[str], step: Callable[[], Awaitable[None]]) -> None:
        try:
            await step()
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            for key in keys:
                self.metrics.setdefault(key, status("failed", f"{type(exc).__name__}: {exc}"[:300]))

    def skip_rest(self, reason: str) -> None:
        for key, *_ in METRICS:
            self.metrics.setdefault(key, status("skipped", reason))


def record_loads(
    run: PeerRun, unverified: list[Timing], verified: list[Timing], cold: list[Timing], cached: list[Timing]
) -> None:
    def median(timings: list[Timing]) -> float:
        return statistics.median(t.seconds for t in timings)

    def cpu_ms(timings: list[Timing]) -> float:
        return statistics.median(t.cpu for t in timings) * 1e3

    run.set("load_unverified_s", median(unverified))
    run.set("load_verified_s", median(verified))
    run.set("verify_overhead_pct", (median(verified) / median(unverified) - 1) * 100)
    run.set("load_cold_s", median(cold))
    run.set("load_cached_s", median(cached))
    run.set("load_cached_requests", max(t.requests for t in cached))
    # An aid on a shared machine: the client's own CPU time (what verification adds is client work).
    run.extra["client_cpu_ms"] = {
        "unverified": cpu_ms(unverified),
        "verified": cpu_ms(verified),
        "cold": cpu_ms(cold),
        "cached": cpu_ms(cached),
    }
    run.extra["load_requests"] = {
        "unverified": unverified[0].requests,
        "verified": verified[0].requests,
        "cold": cold[0].requests,
    }
    run.extra["load_wall_s"] = {
        "unverified": [t.seconds for t in unverified],
        "verified": [t.seconds for t in verified],
        "cold": [t.seconds for t in cold],
        "cached": [t.seconds for t in cached],
    }


def start_budget_status(exc: Exception, budget: float) -> dict[str, Any]:
    if isinstance(exc, StartTimedOut):
        return status("timed out", str(exc)[:500], elapsed_s=budget)
    return status("failed", str(exc)[:500])


async def listing_and_pages(
    run: PeerRun, server: Server, expected_skills: int | None, listing_budget: float, budget: float, settings: Settings
) -> list[dict[str, Any]]:
    """The whole skills/list (repeated), then single pages at random cursors: the same for both peers."""
    entries: list[dict[str, Any]] = []
    cursors: list[str | None] = [None]

    async def listing() -> None:
        nonlocal entries, cursors
        result, passes = await list_all(server.url, budget=listing_budget, repeats=settings.list_repeats)
        entries, cursors = result.entries, result.cursors
        if passes:
            run.set("list_all_s", statistics.median(passes))
            run.extra["list_pages"] = result.pages
            run.extra["list_skills"] = len(result.entries)
            run.extra["list_passes_s"] = passes
            return
        pages_expected = -(-expected_skills // PAGE_SIZE) if expected_skills else None
        estimate = result.elapsed / result.pages * pages_expected if result.pages and pages_expected else None
        run.set(
            "list_all_s",
            status(
                "timed out",
                f"{result.pages} page(s) in {listing_budget:.0f} s",
                pages_done=result.pages,
                elapsed_s=listing_budget,
                estimate_s=estimate,
            ),
        )

    await run.guard(["list_all_s"], listing)

    async def pages() -> None:
        for key, value in (await page_cost(server.url, cursors, samples=settings.page_samples, budget=budget)).items():
            run.set(key, value)

    await run.guard(["page_p50_ms", "page_p99_ms"], pages)
    return entries if isinstance(run.metrics.get("list_all_s"), float) else []


@dataclass
class Live:
    """A server kept running after its peer's own measurements, for the side-by-side phase."""

    run: PeerRun
    server: Server
    cursors: list[str | None]
    skills: int  # in its first whole listing (peers may refuse different skills of a corpus)


# Peers whose listing, page, skills/get and resources/read latencies are measured side by side (`side_by_side`).
# FastMCP is measured on its own: its time budgets would stall every other peer's rounds.
# What metrics and request logging cost (issue 23): three skillwire servers differing only in those, measured
# side by side as server-only peers (`--peers obs-off,obs-metrics,obs-logs`): nothing counted nor logged
# (`--no-metrics`), the default (metrics on, no request log), and metrics with a JSON log line per request.
# `obs-control` is obs-off once more: how far two identical servers differ in the same rounds (the noise floor
# an overhead figure is read against).
OVERHEAD_PEERS: dict[str, list[str]] = {
    "obs-off": ["--no-metrics"],
    "obs-metrics": [],
    "obs-logs": ["--log-requests", "--log-format", "json"],
    "obs-control": ["--no-metrics"],
}
# The floor with the SDK's response writer encoding each reply in one pass (bench/floor_server.py): what
# docs/sdk-upstream.md's ask 1 would buy, measured beside the floor (`--peers ...,floor,floor-onepass`).
FLOOR_VARIANTS: dict[str, list[str]] = {"floor-onepass": ["--one-pass-json"]}
SIDE_BY_SIDE = ("skillwire", "typescript", "floor", *FLOOR_VARIANTS, *OVERHEAD_PEERS)
# Each side-by-side measurement reads every server's CPU after each fifth of its rounds too: the spread of
# the per-block ratios between two peers is the noise a whole-measurement ratio has to be read against.
CPU_BLOCKS = 5
# Whole listings side by side when the overhead variants are measured (unless --list-repeats says): five made
# the listing's CPU figure five samples of clock ticks (10 ms each), and two equal servers differed by 10%.
OVERHEAD_LIST_REPEATS = 25
LATENCY_KEYS = [
    "list_all_s",
    "page_p50_ms",
    "page_p99_ms",
    "get_p50_ms",
    "get_p99_ms",
    "read_small_p50_ms",
    "read_small_p99_ms",
    "read_small_MBps",
    "read_large_p50_ms",
    "read_large_MBps",
]


async def first_listing(
    run: PeerRun, server: Server, expected_skills: int | None, budget: float
) -> tuple[list[dict[str, Any]], list[str | None]]:
    """One whole skills/list: the entries (to choose the workload from) and every page's cursor. The timed
    listings come later, side by side; a listing that does not finish is the peer's `list_all_s` now."""
    result, passes = await list_all(server.url, budget=budget, repeats=1)
    if passes:
        run.extra["list_pages"] = result.pages
        run.extra["list_skills"] = len(result.entries)
        return result.entries, result.cursors
    pages_expected = -(-expected_skills // PAGE_SIZE) if expected_skills else None
    estimate = result.elapsed / result.pages * pages_expected if result.pages and pages_expected else None
    run.set(
        "list_all_s",
        status(
            "timed out",
            f"{result.pages} page(s) in {budget:.0f} s",
            pages_done=result.pages,
            elapsed_s=budget,
            estimate_s=estimate,
        ),
    )
    return [], []


async def side_by_side(live: dict[str, Live], workload: Workload, settings: Settings) -> None:
    """Whole listings, pages, skills/get and resources/read for every live peer, interleaved request by request.

    Each peer gets the same requests (pages by position, since cursors are each server's own) in the same
    rounds, in a random order per round, so load from other processes on a shared machine hits every peer
    alike and the ratios between them hold. Each measurement also records each server's own CPU time per
    request (`extra.server_cpu_ms`), which the load barely moves.
    """
    budget = settings.skillwire_budget * len(live)
    pids = {peer: one.server.process.pid for peer, one in live.items()}
    clients = {peer: RawClient(one.server.url) for peer, one in live.items()}
    rng = random.Random(1)
    pages = max(len(one.cursors) for one in live.values())
    positions = [rng.randrange(pages) for _ in range(settings.page_samples)]

    async def listing(peer: str, client: RawClient, index: int) -> None:
        cursor: str | None = None
        count = 0
        while True:
            page = await client.list_page(cursor)
            count += len(page.get("skills") or [])
            cursor = page.get("nextCursor") or None
            if cursor is None:
                break
        if count != live[peer].skills:
            raise AssertionError(f"a whole listing had {count} skills, the first one {live[peer].skills}")

    async def page(peer: str, client: RawClient, index: int) -> None:
        cursors = live[peer].cursors
        await client.list_page(cursors[positions[index] % len(cursors)])

    async def get(peer: str, client: RawClient, index: int) -> None:
        uri = workload.get_uris[index]
        result = await client.call("skills/get", {"uri": uri})
        if result.get("skill", {}).get("uri") != uri:
            raise AssertionError(f"skills/get {uri} answered {result!r:.200}")

    def reader(files: list[tuple[str, int]]) -> Callable[[str, RawClient, int], Awaitable[None]]:
        async def read(peer: str, client: RawClient, index: int) -> None:
            uri, size = files[index]
            data = await client.read(uri)
            if len(data) != size:
                raise AssertionError(f"{uri}: read {len(data)} bytes, the manifest says {size}")

        return read

    steps: list[tuple[str, int, Callable[[str, RawClient, int], Awaitable[None]]]] = [
        ("list", settings.list_repeats, listing),
        ("page", len(positions), page),
        ("get", len(workload.get_uris), get),
        ("read_small", len(workload.small), reader(workload.small)),
        ("read_large", len(workload.large), reader(workload.large)),
    ]
    try:
        for peer, client in clients.items():  # warm each connection and each server: one whole walk
            await listing(peer, client, 0)
        for name, count, one in steps:
            if count == 0:
                for item in live.values():
                    item.run.set(f"{name}_p50_ms", status("n/a", f"the catalog has no {name[5:]} files"))
                continue
            log(f"  side by side: {name} × {count} for {', '.join(live)}")
            measured = await interleave(
                clients, pids, count, budget * (2 if name == "list" else 1), one, blocks=CPU_BLOCKS
            )
            for peer, item in live.items():
                times = measured.times[peer]
                item.run.extra.setdefault("server_cpu_ms", {})[name] = measured.cpu_ms.get(peer)
                if measured.cpu_ms_blocks.get(peer):
                    item.run.extra.setdefault("server_cpu_ms_blocks", {})[name] = measured.cpu_ms_blocks[peer]
                if peer in measured.failed:
                    reason = measured.failed[peer]
                    keys = ["list_all_s"] if name == "list" else [f"{name}_p50_ms", f"{name}_p99_ms"]
                    for key in keys:
                        item.run.set(key, status("failed", reason))
                    continue
                if name == "list":
                    if times:
                        item.run.set("list_all_s", statistics.median(times))
                        item.run.extra["list_passes_s"] = times
                    else:
                        item.run.set("list_all_s", status("timed out", f"no whole listing within {budget:.0f} s"))
                    continue
                for key, value in latencies(name, times, f"no answer within {budget:.0f} s").items():
                    item.run.set(key, value)
                if name.startswith("read_") and times:
                    files = workload.small if name == "read_small" else workload.large
                    item.run.set(f"{name}_MBps", sum(size for _, size in files[: len(times)]) / sum(times) / 1e6)
    finally:
        for client in clients.values():
            await client.__aexit__(None, None, None)


async def gets_and_reads(run: PeerRun, server: Server, workload: Workload, budget: float) -> None:
    async def gets() -> None:
        for key, value in (await get_latency(server.url, workload.get_uris, budget=budget)).items():
            run.set(key, value)

    await run.guard(["get_p50_ms", "get_p99_ms"], gets)
    for label, files in (("small", workload.small), ("large", workload.large)):

        async def reads(label: str = label, files: list[tuple[str, int]] = files) -> None:
            for key, value in (await read_latency(server.url, files, label, budget=budget)).items():
                run.set(key, value)

        await run.guard([f"read_{label}_p50_ms", f"read_{label}_MBps"], reads)


async def run_skillwire(
    catalog: str,
    root: Path,
    workdir: Path,
    settings: Settings,
    workload: Workload | None,
    expected: int,
    live: dict[str, Live],
) -> tuple[PeerRun, Workload | None]:
    """Starts, restarts, loads and the watcher; the server is left in `live` for `side_by_side`."""
    run = PeerRun(catalog, "skillwire")
    logs = workdir / "logs"
    digests = workdir / f"digests-{catalog}.sqlite"
    # The digest cache and what lives next to it: SQLite's -wal/-shm and the persisted snapshots
    # (`<file>.snapshot-<hash>`), so the first start below really starts without either.
    for stale in workdir.glob(f"{digests.name}*"):
        stale.unlink(missing_ok=True)
    budget = settings.skillwire_start_budget

    async def launch_skillwire(log: str, digest_cache: Path | None = None) -> Started:
        argv = skillwire_argv(root, digest_cache=digest_cache)
        machine.warm_page_cache(root)
        return await start("skillwire", argv, logs / f"{catalog}-{log}.log", budget=budget)

    peaks: dict[str, float | None] = {}
    # (loop wall, loop CPU, cold wall, cold CPU) per cold start: the bare walk + read + hash loop runs in
    # its own process right before each cold start, so the two are timed the same way at the same load.
    pairs: list[tuple[float, float, float, float | None]] = []

    async def cold_start(log: str) -> Started:
        loop = machine.walk_read_hash_process(root)
        started = await launch_skillwire(log)
        pairs.append((loop["wall_s"], loop["cpu_s"], started.first_list_s, started.start_cpu_s))
        return started

    async def start_seconds(log: str, digest_cache: Path | None = None) -> float:
        """Seconds from process start to the first skills/list answer; the server is stopped after."""
        started = await (launch_skillwire(log, digest_cache) if digest_cache is not None else cold_start(log))
        peaks[log] = started.start_peak_rss_mb
        started.server.stop()
        return started.first_list_s

    try:
        # A first start fills a fresh digest cache file; the starts after it are restarts.
        first_s = await start_seconds("sw-warm", digests)
        run.extra["first_start_writing_digest_cache_s"] = first_s
        # Slow starts are measured once: a repeat would cost more than it tells.
        repeats = settings.start_repeats if first_s < 5 else 1
        restarts = [await start_seconds(f"sw-restart{n}", digests) for n in range(repeats)]
        unknown = status("n/a", "/proc/<pid>/status is unavailable")
        run.set("start_peak_rss_mb", peaks["sw-warm"] or unknown)
        warm_peaks = [v for k, v in peaks.items() if k.startswith("sw-restart") and v is not None]
        run.set("restart_peak_rss_mb", max(warm_peaks) if warm_peaks else unknown)
        run.set("restart_digest_cache_s", statistics.median(restarts))
        colds = [await start_seconds(f"sw-cold{n}") for n in range(repeats - 1)]
        main = await cold_start("sw")
        colds.append(main.first_list_s)
    except (StartFailed, StartTimedOut) as exc:
        run.metrics.setdefault("restart_digest_cache_s", start_budget_status(exc, budget))
        run.metrics["start_first_list_s"] = start_budget_status(exc, budget)
        run.skip_rest(f"skillwire serve did not start: {exc}"[:300])
        return run, workload
    server = main.server
    kept = False
    try:
        run.extra["listening_s"] = main.listening_s
        run.set("start_first_list_s", statistics.median(colds))
        loop_walls = [pair[0] for pair in pairs]
        run.set("cold_start_vs_loop", statistics.median(colds) / statistics.median(loop_walls))
        run.extra["walk_read_hash_loop_s"] = loop_walls
        run.extra["walk_read_hash_loop_cpu_s"] = [pair[1] for pair in pairs]
        run.extra["cold_start_cpu_s"] = [pair[3] for pair in pairs]
        cpus = [(pair[3], pair[1]) for pair in pairs if pair[3] is not None]
        if cpus:
            run.extra["cold_start_vs_loop_cpu"] = statistics.median(c for c, _ in cpus) / statistics.median(
                loop for _, loop in cpus
            )
        run.extra["load_at_cold_starts"] = load_average()
        entries, cursors = await first_listing(run, server, expected, settings.skillwire_budget * 2)
        if workload is None and entries:
            workload = make_workload(entries, root, settings, one_small_file=catalog.endswith("-refs"))
        if workload is None or not entries:
            run.skip_rest("no listing to choose the workload from")
            return run, workload
        state = workdir / "host-state" / catalog
        shutil.rmtree(state, ignore_errors=True)

        async def loads() -> None:
            # "verified": a host whose approvals already cover the skill, no cache: the same requests as
            # the unverified reads plus verification. "cold": a first load (approve, verify, fill the
            # cache). Interleaved, so that drift (other load on the machine) hits all three alike.
            approved = state / "approved"
            await skillwire_load(server.url, workload.load, approved, cache=False)
            unverified: list[Timing] = []
            verified: list[Timing] = []
            cold: list[Timing] = []
            began = time.perf_counter()
            for n in range(settings.load_repeats):
                rep = time.perf_counter()
                unverified.append(await load_unverified(server.url, workload.load))
                verified += await skillwire_load(server.url, workload.load, approved, cache=False)
                cold += await skillwire_load(server.url, workload.load, state / f"cold{n}", cache=True)
                now = time.perf_counter()
                if now - began + (now - rep) > settings.skillwire_budget:
                    break  # fewer repeats of a slow load (the limits skill)
            cached = await skillwire_load(
                server.url, workload.load, state / "cold0", cache=True, listed=True, repeats=len(cold)
            )
            record_loads(run, unverified, verified, cold, cached)

        await run.guard(
            [
                "load_unverified_s",
                "load_verified_s",
                "verify_overhead_pct",
                "load_cold_s",
                "load_cached_s",
                "load_cached_requests",
            ],
            loads,
        )

        async def watch() -> None:
            run.set(
                "watch_visible_s",
                await edit_visible(
                    server.url,
                    workload.watch_skill,
                    workload.watch_file,
                    workload.watch_path,
                    budget=settings.watch_budget,
                ),
            )

        await run.guard(["watch_visible_s"], watch)
        live["skillwire"] = Live(run, server, cursors, len(entries))
        kept = True
    finally:
        if not kept:
            server.stop()
            run.skip_rest("not reached")
    return run, workload


async def run_fastmcp(
    catalog: str, root: Path, workdir: Path, settings: Settings, workload: Workload | None, loop_s: float, expected: int
) -> tuple[PeerRun, Workload | None]:
    run = PeerRun(catalog, "fastmcp")
    logs = workdir / "logs"
    run.metrics["restart_digest_cache_s"] = status(
        "n/a", "FastMCP keeps no digest cache: every start reads and hashes the whole catalog"
    )
    # FastMCP has no warm restart (nothing persists between its starts): its only start is a cold one.
    run.metrics["restart_peak_rss_mb"] = status("n/a", "FastMCP keeps nothing between starts: no warm restart")
    machine.warm_page_cache(root)
    try:
        main = await start(
            "fastmcp",
            fastmcp_argv(root),
            logs / f"{catalog}-fastmcp.log",
            budget=settings.fastmcp_start_budget,
        )
    except (StartFailed, StartTimedOut) as exc:
        run.metrics["start_first_list_s"] = start_budget_status(exc, settings.fastmcp_start_budget)
        log(f"  [{catalog}] fastmcp: did not start: {exc}")
        run.skip_rest(f"FastMCP did not start: {exc}"[:300])
        return run, workload
    server = main.server
    try:
        run.extra["listening_s"] = main.listening_s
        run.set("start_first_list_s", main.first_list_s)
        run.set("cold_start_vs_loop", main.first_list_s / loop_s)
        peak = main.start_peak_rss_mb
        run.set("start_peak_rss_mb", peak if peak is not None else status("n/a", "/proc/<pid>/status is unavailable"))
        entries = await listing_and_pages(
            run, server, expected, settings.fastmcp_list_budget, settings.fastmcp_budget, settings
        )
        if workload is None and entries:
            workload = make_workload(entries, root, settings, one_small_file=catalog.endswith("-refs"))
        if workload is None:
            run.skip_rest("no complete listing to choose the workload from")
            return run, workload
        await gets_and_reads(run, server, workload, settings.fastmcp_budget)

        async def loads() -> None:
            # FastMCP has no content cache. Each repeat uses a fresh client with FastMCP's response cache on
            # (cache=True): its first read_skill is the verified (and cold) load, its second the load "from
            # cache". Repeats stop at the budget (at least one); a single repeat is cut off at 3× the budget.
            with anyio.fail_after(settings.fastmcp_load_budget * 3):
                unverified: list[Timing] = []
                verified: list[Timing] = []
                cached: list[Timing] = []
                began = time.perf_counter()
                for _ in range(settings.load_repeats):
                    rep = time.perf_counter()
                    unverified.append(await load_unverified(server.url, workload.load))
                    first, second = await fastmcp_read_skill_twice(server.url, workload.load)
                    verified.append(first)
                    cached.append(second)
                    now = time.perf_counter()
                    if now - began + (now - rep) > settings.fastmcp_load_budget:
                        break
                record_loads(run, unverified, verified, verified, cached)

        keys = [
            "load_unverified_s",
            "load_verified_s",
            "verify_overhead_pct",
            "load_cold_s",
            "load_cached_s",
            "load_cached_requests",
        ]
        try:
            await loads()
        except TimeoutError:
            for key in keys:
                run.metrics.setdefault(
                    key, status("timed out", f"one repeat took over {settings.fastmcp_load_budget * 3:.0f} s")
                )
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            for key in keys:
                run.metrics.setdefault(key, status("failed", f"{type(exc).__name__}: {exc}"[:300]))
        rss = server.peak_rss_mb()
        run.set("peak_rss_mb", rss if rss is not None else status("n/a", "/proc/<pid>/status is unavailable"))
    finally:
        server.stop()

    # FastMCP has no watcher; reload=True re-reads the folders on every request. A separate server.
    if main.first_list_s > settings.reload_server_max_start:
        run.metrics["watch_visible_s"] = status(
            "skipped",
            f"FastMCP's start took {main.first_list_s:.0f} s; its reload=True server re-reads the whole "
            "catalog on every request",
        )
    else:
        try:
            reload = await start(
                "fastmcp",
                fastmcp_argv(root, reload=True),
                logs / f"{catalog}-fastmcp-reload.log",
                budget=settings.fastmcp_start_budget,
            )
        except (StartFailed, StartTimedOut) as exc:
            run.metrics["watch_visible_s"] = start_budget_status(exc, settings.fastmcp_start_budget)
        else:
            try:
                run.extra["reload_start_first_list_s"] = reload.first_list_s

                async def watch() -> None:
                    run.set(
                        "watch_visible_s",
                        await edit_visible(
                            reload.server.url,
                            workload.watch_skill,
                            workload.watch_file,
                            workload.watch_path,
                            budget=settings.watch_budget,
                            arm=0.0,  # nothing to arm: FastMCP re-reads the folders on each request
                        ),
                    )

                await run.guard(["watch_visible_s"], watch)
            finally:
                reload.server.stop()
    run.skip_rest("not reached")
    return run, workload


HOST_ONLY = (
    "restart_digest_cache_s",
    "restart_peak_rss_mb",
    "load_unverified_s",
    "load_verified_s",
    "verify_overhead_pct",
    "load_cold_s",
    "load_cached_s",
    "load_cached_requests",
    "watch_visible_s",
)


async def run_server_only(
    peer: str,
    catalog: str,
    root: Path,
    workdir: Path,
    settings: Settings,
    workload: Workload | None,
    loop_s: float,
    expected: int,
    live: dict[str, Live],
) -> tuple[PeerRun, Workload | None]:
    """A peer measured as a server only (typescript, floor): its start here, the rest in `side_by_side`."""
    run = PeerRun(catalog, peer)
    why = {
        "typescript": "the TypeScript SDK has no host library, digest cache or watcher here (reload() is on demand)",
        "floor": "the floor is a transport, not a skills implementation",
        "floor-onepass": "the floor is a transport, not a skills implementation",
    }.get(peer, "an overhead variant of skillwire: measured as a server only")
    for key in HOST_ONLY:
        run.metrics[key] = status("n/a", why)
    missing = typescript_missing() if peer == "typescript" else None
    if missing is not None:
        log(f"  [{catalog}] {peer}: skipped: {missing}")
        run.skip_rest(missing)
        return run, workload
    if peer in OVERHEAD_PEERS:
        argv = skillwire_argv(root, page_size=PAGE_SIZE, extra=OVERHEAD_PEERS[peer])
    elif peer in FLOOR_VARIANTS:
        argv = floor_argv(root, page_size=PAGE_SIZE, extra=FLOOR_VARIANTS[peer])
    else:
        argv = typescript_argv(root, page_size=PAGE_SIZE) if peer == "typescript" else floor_argv(root)
    budget = settings.skillwire_start_budget
    try:
        machine.warm_page_cache(root)
        main = await start(peer, argv, workdir / "logs" / f"{catalog}-{peer}.log", budget=budget)
    except (StartFailed, StartTimedOut) as exc:
        run.metrics["start_first_list_s"] = start_budget_status(exc, budget)
        log(f"  [{catalog}] {peer}: did not start: {exc}")
        run.skip_rest(f"{peer} did not start: {exc}"[:300])
        return run, workload
    server = main.server
    kept = False
    try:
        run.extra["listening_s"] = main.listening_s
        run.set("start_first_list_s", main.first_list_s)
        run.set("cold_start_vs_loop", main.first_list_s / loop_s)
        if main.start_peak_rss_mb is not None:
            run.set("start_peak_rss_mb", main.start_peak_rss_mb)
        entries, cursors = await first_listing(run, server, expected, settings.skillwire_budget * 2)
        if workload is None and entries:
            workload = make_workload(entries, root, settings, one_small_file=catalog.endswith("-refs"))
        if workload is None or not entries:
            run.skip_rest("no listing to choose the workload from")
            return run, workload
        live[peer] = Live(run, server, cursors, len(entries))
        kept = True
    finally:
        if not kept:
            server.stop()
            run.skip_rest("not reached")
    return run, workload


# -- ratios, targets, table -------------------------------------------------------------------------------------------


def observability_overhead(
    peer_results: dict[str, dict[str, Value | None]], extras: dict[str, dict[str, Any]]
) -> dict[str, dict[str, float]]:
    """Per variant (obs-metrics, obs-logs, obs-control), percent over obs-off in the same side-by-side rounds:
    server CPU per skills/get and per whole listing (with the range of the block-by-block ratios), and
    skills/get p50 and listing time."""
    if "obs-off" not in peer_results:
        return {}
    base_cpu = extras.get("obs-off", {}).get("server_cpu_ms", {})
    base_blocks = extras.get("obs-off", {}).get("server_cpu_ms_blocks", {})
    out: dict[str, dict[str, float]] = {}
    for variant in ("obs-metrics", "obs-logs", "obs-control"):
        if variant not in peer_results:
            continue
        cpu = extras.get(variant, {}).get("server_cpu_ms", {})
        blocks = extras.get(variant, {}).get("server_cpu_ms_blocks", {})
        row: dict[str, float] = {}
        for key, ours, theirs in (
            ("get_cpu_pct", cpu.get("get"), base_cpu.get("get")),
            ("list_cpu_pct", cpu.get("list"), base_cpu.get("list")),
            ("get_p50_pct", peer_results[variant].get("get_p50_ms"), peer_results["obs-off"].get("get_p50_ms")),
            ("list_all_pct", peer_results[variant].get("list_all_s"), peer_results["obs-off"].get("list_all_s")),
        ):
            if is_number(ours) and is_number(theirs) and theirs > 0:
                row[key] = (ours / theirs - 1) * 100
        for name in ("get", "list"):
            # Block by block (the same rounds for both servers): the range says how far the figure is noise.
            pairs = [(a, b) for a, b in zip(blocks.get(name, []), base_blocks.get(name, []), strict=False) if b > 0]
            if len(pairs) > 1:
                ratios = [(a / b - 1) * 100 for a, b in pairs]
                row[f"{name}_cpu_pct_min"], row[f"{name}_cpu_pct_max"] = min(ratios), max(ratios)
        out[variant] = row
    return out


def advantage(key: str, ours: Value | None, theirs: Value | None) -> Value | None:
    """How many times better skillwire is (> 1: skillwire is better); a lower bound when FastMCP timed out."""
    better = next(b for k, _, _, b in METRICS if k == key)
    if key in NO_RATIO or not is_number(ours) or ours == 0:
        return None
    if is_number(theirs):
        if theirs == 0:
            return None
        return theirs / ours if better == "lower" else ours / theirs
    if isinstance(theirs, dict) and theirs.get("status") == "timed out" and better == "lower":
        elapsed = theirs.get("elapsed_s")
        if is_number(elapsed):
            return {"at_least": elapsed / ours}
    return None


def numeric(value: Any) -> float | None:
    return float(value) if is_number(value) else None


def catalog_roles(catalogs: dict[str, Any]) -> tuple[str | None, str | None]:
    """The catalogs the targets are judged on: 10,000 (else the largest generated) and 300 (else the smallest)."""
    generated = sorted((int(name), name) for name in catalogs if name.isdigit())
    if not generated:
        return None, None
    big = "10000" if "10000" in catalogs else generated[-1][1]
    small = "300" if "300" in catalogs else generated[0][1]
    return big, small


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    catalogs: dict[str, Any] = results["catalogs"]
    big, small = catalog_roles(catalogs)

    def of(peer: str, catalog: str | None, key: str) -> Any:
        if catalog is None:
            return None
        return catalogs.get(catalog, {}).get("peers", {}).get(peer, {}).get(key)

    def sw(catalog: str | None, key: str) -> Any:
        return of("skillwire", catalog, key)

    out: list[dict[str, Any]] = []

    def add(name: str, catalog: str | None, measured: float | None, passed: bool | None, shown: str) -> None:
        verdict = "n/a" if passed is None else ("PASS" if passed else "MISS")
        out.append({"target": name, "catalog": catalog, "measured": measured, "shown": shown, "result": verdict})

    ratio: Any = None
    if small is not None:
        ratio = catalogs.get(small, {}).get("advantage", {}).get("list_all_s")
    if is_number(ratio):
        add("whole skills/list ≥ 20× faster than FastMCP", small, ratio, ratio >= 20, f"{ratio:.1f}×")
    elif isinstance(ratio, dict):
        low = float(ratio["at_least"])
        add("whole skills/list ≥ 20× faster than FastMCP", small, low, True if low >= 20 else None, f"≥ {low:.1f}×")
    else:
        add("whole skills/list ≥ 20× faster than FastMCP", small, None, None, "not measured")
    value = numeric(sw(big, "list_all_s"))
    add("whole skills/list < 2 s", big, value, None if value is None else value < 2, fmt(value, "s"))
    page_big, page_small = numeric(sw(big, "page_p50_ms")), numeric(sw(small, "page_p50_ms"))
    page_ratio = page_big / page_small if page_big and page_small and big != small else None
    add(
        f"skills/list page at {big or 10000} skills ≤ 2× the page at {small or 300}",
        big,
        page_ratio,
        None if page_ratio is None else page_ratio <= 2,
        fmt(page_ratio, "×"),
    )
    cold, restart = numeric(sw(big, "start_first_list_s")), numeric(sw(big, "restart_digest_cache_s"))
    for shape in [c for c in catalogs if c == big or c.endswith("-refs")]:
        value = numeric(sw(shape, "cold_start_vs_loop"))
        extra = catalogs.get(shape, {}).get("extra", {}).get("skillwire", {})
        loops, cpu = extra.get("walk_read_hash_loop_s") or [], extra.get("cold_start_vs_loop_cpu")
        shape_cold = numeric(sw(shape, "start_first_list_s"))
        # The floor of the ratio for a server on the `mcp` SDK: importing it, then the loop's own work.
        sdk_import = numeric(results.get("imports_s", {}).get("mcp"))
        floor = (sdk_import + statistics.median(loops)) / statistics.median(loops) if sdk_import and loops else None
        add(
            "cold start ≤ 2× the bare walk+read+hash loop (same load, both from process start)",
            shape,
            value,
            None if value is None else value <= 2,
            "—"
            if value is None or shape_cold is None or not loops
            else f"{value:.2f}× ({shape_cold:.2f} s vs {statistics.median(loops):.2f} s)"
            + ("" if cpu is None else f"; CPU {cpu:.2f}×")
            + ("" if floor is None else f"; importing the mcp SDK alone makes it {floor:.2f}×"),
        )
    share = restart / cold * 100 if cold and restart else None
    add(
        "restart (snapshot + digest cache) ≤ 25% of cold start",
        big,
        share,
        None if share is None else share <= 25,
        "—" if share is None else f"{share:.1f}% ({restart:.2f} s of {cold:.2f} s)",
    )

    def versus(
        name: str,
        key: str,
        peer: str,
        passes: Callable[[float, float], bool],
        show: str,
        catalog: str | None = None,
        their_key: str | None = None,
    ) -> None:
        where = big if catalog is None else catalog
        ours, theirs = numeric(sw(where, key)), numeric(of(peer, where, their_key or key))
        if ours is None or theirs is None or ours == 0:
            why = "not measured" if ours is None else f"{peer}: {fmt(of(peer, where, their_key or key))}"
            add(name, where, None, None, why)
            return
        add(
            name, where, theirs / ours, passes(ours, theirs), show.format(ours=ours, theirs=theirs, ratio=theirs / ours)
        )

    # Issue 25's targets against the TypeScript SDK, on each shape measured: the whole listing at 2,000
    # skills (≥ 1×) and at 10,000 (≥ 1.3×), the start at 10,000 (≥ 3× faster), and peak RSS at 10,000
    # (≤ 0.5×) for skillwire's cold start with its caches on and its warm restart, against the
    # TypeScript server's start (the VmHWM of each at its first skills/list answer).
    large = [name for name in catalogs if name.split("-")[0] == "10000"] or ([big] if big else [])
    for name in [n for n in catalogs if n.split("-")[0] == "2000"]:
        versus(
            "whole skills/list at least as fast as the TypeScript SDK",
            "list_all_s",
            "typescript",
            lambda ours, theirs: theirs >= ours,
            "{ratio:.2f}× ({ours:.3f} s vs {theirs:.3f} s)",
            name,
        )
    for name in large:
        versus(
            "whole skills/list ≥ 1.3× faster than the TypeScript SDK",
            "list_all_s",
            "typescript",
            lambda ours, theirs: theirs >= 1.3 * ours,
            "{ratio:.2f}× ({ours:.2f} s vs {theirs:.2f} s)",
            name,
        )
        versus(
            "start → first skills/list ≥ 3× faster than the TypeScript SDK",
            "start_first_list_s",
            "typescript",
            lambda ours, theirs: theirs >= 3 * ours,
            "{ratio:.2f}× ({ours:.2f} s vs {theirs:.2f} s)",
            name,
        )
        for key, what in (("start_peak_rss_mb", "cold start"), ("restart_peak_rss_mb", "warm restart")):
            versus(
                f"peak RSS, {what} (caches on) ≤ 0.5× the TypeScript SDK's start",
                key,
                "typescript",
                lambda ours, theirs: ours <= 0.5 * theirs,
                "{ours:.0f} MB vs {theirs:.0f} MB",
                name,
                "start_peak_rss_mb",
            )
    for key, what in (("get_p50_ms", "skills/get p50"), ("read_small_p50_ms", "resources/read < 16 KB p50")):
        versus(
            f"{what} within 1.2× of the bare-SDK floor",
            key,
            "floor",
            lambda ours, theirs: ours <= 1.2 * theirs,
            "{ours:.2f} ms vs floor {theirs:.2f} ms",
        )
    for key, what in (("get_p99_ms", "skills/get p99"), ("read_small_p99_ms", "resources/read < 16 KB p99")):
        versus(
            f"{what} ≤ the TypeScript SDK's",
            key,
            "typescript",
            lambda ours, theirs: ours <= theirs,
            "{ours:.2f} ms vs {theirs:.2f} ms",
        )
    versus(
        "peak RSS ≤ 0.5× the TypeScript SDK's",
        "peak_rss_mb",
        "typescript",
        lambda ours, theirs: ours <= 0.5 * theirs,
        "{ours:.0f} MB vs {theirs:.0f} MB",
    )
    value = numeric(sw(big, "get_p99_ms"))
    add("skills/get p99 < 5 ms over HTTP", big, value, None if value is None else value < 5, fmt(value, "ms"))
    value = numeric(sw(big, "verify_overhead_pct"))
    add("verified load ≤ 10% over unverified", big, value, None if value is None else value <= 10, fmt(value, "%"))
    value = numeric(sw(big, "load_cached_requests"))
    add(
        "a load from the cache makes 0 requests",
        big,
        value,
        None if value is None else value == 0,
        "—" if value is None else f"{value:.0f} requests",
    )
    value = numeric(sw(big, "peak_rss_mb"))
    add("server peak RSS < 200 MB", big, value, None if value is None else value < 200, fmt(value, "MB"))
    value = numeric(sw(big, "watch_visible_s"))
    add("watched one-file edit in skills/get < 1 s", big, value, None if value is None else value < 1, fmt(value, "s"))
    return out


def fmt(value: Any, unit: str = "") -> str:
    if isinstance(value, dict):
        if "at_least" in value:
            return f"≥ {value['at_least']:.1f}×"
        kind = value.get("status", "?")
        estimate = value.get("estimate_s")
        return f"{kind} (~{estimate:.0f} s)" if is_number(estimate) else str(kind)
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if unit == "%":
        return f"{value:+.1f}%"
    if unit == "×":
        return f"{value:.2f}×"
    if isinstance(value, int):
        return f"{value:,}{unit}"
    magnitude = abs(value)
    digits = 3 if magnitude < 0.1 else 2 if magnitude < 10 else 1 if magnitude < 1000 else 0
    return f"{value:,.{digits}f}{' ' if unit and not unit.startswith(' ') else ''}{unit}".rstrip()


def table(results: dict[str, Any]) -> str:
    lines: list[str] = []
    meta = results["meta"]
    versions = f"skillwire {meta['skillwire']} vs FastMCP {meta['fastmcp']}"
    if meta.get("typescript"):
        versions += f" and the TypeScript SDK {meta['typescript']}"
    lines.append(f"{versions} (mcp {meta['mcp']} under skillwire and the floor) — {meta['date']} — {meta['command']}")
    m = meta["machine"]
    lines.append(
        f"machine: {m['cpu']}, {m['cores']} cores, {(m['memory_mb'] or 0) / 1024:.0f} GiB, Python {m['python']}; "
        f"hashlib SHA-256 {results['sha256_MBps']:.0f} MB/s"
    )
    imports = results.get("imports_s", {})
    if imports:
        lines.append(
            f"fixed start-up cost: bare interpreter {imports['python']:.2f} s; importing skillwire's server "
            f"{imports['skillwire']:.2f} s"
            + (f" (the mcp SDK's {imports['mcp']:.2f} s of it)" if "mcp" in imports else "")
            + f", FastMCP's {imports['fastmcp']:.2f} s"
        )
    before, after = meta.get("load_average_at_start"), meta.get("load_average_at_end")
    if before and after:
        lines.append(
            f"load average (1/5/15 min) at start {'/'.join(f'{x:.1f}' for x in before)}, "
            f"at end {'/'.join(f'{x:.1f}' for x in after)} (other processes share these cores)"
        )
    peers = results["peers"]
    for name, catalog in results["catalogs"].items():
        lines.append("")
        if "skipped" in catalog:
            lines.append(f"== {name}: skipped ({catalog['skipped']})")
            continue
        s = catalog["stats"]
        lines.append(
            f"== {name}: {catalog['description']} — {s['skills']:,} skills, {s['files']:,} files, "
            f"{s['bytes'] / 1e6:,.1f} MB ({s['large_files']:,} ≥ 50 KB, {s['binary_files']:,} binary)"
        )
        served = [f"{peer} {catalog['extra'].get(peer, {}).get('list_skills', '—')}" for peer in peers]
        lines.append(f"   skills served (whole skills/list): {', '.join(served)}")
        loop = catalog["machine"]
        lines.append(f"   bare read+hash loop: {loop['read_hash_loop_s']:.3f} s ({loop['read_hash_MBps']:.0f} MB/s)")
        cold_pairs = catalog["extra"].get("skillwire", {})
        if cold_pairs.get("walk_read_hash_loop_s"):
            lines.append(
                "   walk+read+hash process right before each skillwire cold start: "
                + ", ".join(f"{s:.2f} s" for s in cold_pairs["walk_read_hash_loop_s"])
                + " (CPU "
                + ", ".join(f"{s:.2f} s" for s in cold_pairs["walk_read_hash_loop_cpu_s"])
                + "); cold start CPU "
                + ", ".join("—" if s is None else f"{s:.2f} s" for s in cold_pairs["cold_start_cpu_s"])
                + f"; load {cold_pairs.get('load_at_cold_starts')}"
            )
        others = [p for p in peers if p != "skillwire"] if "skillwire" in peers else []
        header = f"   {'metric':<48}" + "".join(f"{p:>14}" for p in peers)
        header += "".join(f"{'  adv. vs ' + o:>20}" for o in others)
        lines.append(header)
        for key, label, unit, _ in METRICS:
            row = f"   {label + (f' ({unit})' if unit and unit not in '×%' else ''):<48}"
            cell_unit = "" if unit in ("s", "ms", "MB", "MB/s") else unit
            for peer in peers:
                row += f"{fmt(catalog['peers'].get(peer, {}).get(key), cell_unit):>14}"
            for other in others:
                adv = catalog.get("advantage_over", {}).get(other, {}).get(key)
                row += f"{fmt(adv, '×') if adv is not None else '':>20}"
            lines.append(row)
        # Server CPU per request from the side-by-side phase: what the load on a shared machine barely moves.
        for name, label in CPU_ROWS:
            cells = [catalog["extra"].get(peer, {}).get("server_cpu_ms", {}).get(name) for peer in peers]
            if any(is_number(cell) for cell in cells):
                row = f"   {'server CPU per ' + label + ' (ms)':<48}"
                lines.append(row + "".join(f"{fmt(cell) if is_number(cell) else '—':>14}" for cell in cells))
        for variant, row in catalog.get("observability_overhead", {}).items():

            def spread(key: str, row: dict[str, float] = row) -> str:
                low, high = row.get(f"{key[:-4]}_pct_min"), row.get(f"{key[:-4]}_pct_max")
                return f" (blocks {low:+.1f}…{high:+.1f}%)" if low is not None and high is not None else ""

            shown = ", ".join(
                f"{label} {row[key]:+.1f}%{spread(key) if 'cpu' in key else ''}"
                for key, label in (
                    ("get_cpu_pct", "server CPU per skills/get"),
                    ("list_cpu_pct", "per whole listing"),
                    ("get_p50_pct", "skills/get p50"),
                    ("list_all_pct", "whole listing"),
                )
                if key in row
            )
            control = variant == "obs-control"
            what = "the same server again: the noise floor" if control else "no metrics, no request log"
            lines.append(f"   {variant} over obs-off ({what}): {shown}")
    lines.append("")
    lines.append("targets (skillwire)")
    for t in results["targets"]:
        where = f" [{t['catalog']}]" if t["catalog"] else ""
        lines.append(f"   {t['result']:<5} {t['target'] + where:<60} {t['shown']}")
    lines.append("")
    lines += [
        "adv. = how many times better skillwire is (the other peer's time ÷ skillwire's; MB/s the other way round);",
        "below 1 the other peer is faster. floor = the mcp SDK stack skillwire runs on, answering every request",
        "from precomputed dicts: skillwire's time over the floor's is the part of a request that is skillwire's own.",
        "Listing, page, get and read latencies of skillwire, typescript and floor are measured side by side, request",
        "by request in a random order per round, so load from other processes hits them alike; 'server CPU' is each",
        "server process's own CPU time (user + system, all threads) per request in those rounds.",
        "'≥' = FastMCP ran out of its time budget. Load = the catalog's largest skill. 'verified' = a host that",
        "already approved it, no cache (the same requests as the unverified reads); 'first load' = approve,",
        "verify and fill the cache. FastMCP has no content cache: its 'first load' and 'from cache' are the first",
        "and second read_skill on one client with cache=True.",
    ]
    return "\n".join(lines)


# -- main -------------------------------------------------------------------------------------------------------------


def command_line(argv: list[str]) -> str:
    executable = Path(sys.executable)
    try:
        shown = str(executable.relative_to(REPO_ROOT))
    except ValueError:
        shown = "python"
    return " ".join([shown, "-m", "bench.run", *argv])


def typescript_version() -> str | None:
    try:
        package = REPO_ROOT / ".tools" / "node_modules" / "@modelcontextprotocol" / "server" / "package.json"
        return str(json.loads(package.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def load_average() -> list[float] | None:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return None


def git_revision() -> str:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO_ROOT, capture_output=True, text=True).stdout
        return rev + ("+dirty" if dirty.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


async def run_all(args: argparse.Namespace, settings: Settings, argv: list[str]) -> dict[str, Any]:
    workdir: Path = args.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    for peer in peers:
        if peer not in PEERS and peer not in OVERHEAD_PEERS and peer not in FLOOR_VARIANTS:
            raise SystemExit(f"unknown peer {peer!r}: use {', '.join([*PEERS, *FLOOR_VARIANTS, *OVERHEAD_PEERS])}")
    results: dict[str, Any] = {
        "meta": {
            "date": datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            "command": command_line(argv),
            "quick": args.quick,
            "skillwire": metadata.version("skillwire"),
            "fastmcp": metadata.version("fastmcp"),
            "typescript": typescript_version(),
            "mcp": metadata.version("mcp"),
            "git": git_revision(),
            "machine": machine.describe(),
            "load_average_at_start": load_average(),
            "settings": settings.__dict__,
            "page_size": PAGE_SIZE,
        },
        "peers": peers,
        "catalogs": {},
    }
    log("measuring hashlib SHA-256 throughput")
    results["sha256_MBps"] = machine.sha256_throughput(64 * 1024 * 1024 if args.quick else 256 * 1024 * 1024)
    log("measuring interpreter start and import times")
    log(f"compiled the bytecode of {machine.compile_bytecode()} modules the Python servers import")
    results["imports_s"] = machine.import_times(runs=1 if args.quick else 3, parallel=args.quick)
    for name in [c.strip() for c in args.catalogs.split(",") if c.strip()]:
        began = time.perf_counter()
        log(f"catalog {name}: preparing")
        root, description = prepare_catalog(name, workdir)
        if root is None:
            results["catalogs"][name] = {"skipped": description}
            log(f"catalog {name}: skipped ({description})")
            continue
        stats = catalog_stats(root)
        loop = machine.read_and_hash(root, runs=2 if args.quick else 3)
        # The other peers' start is compared with this run of the walk + read + hash loop (a process of
        # its own, as their start is); skillwire's cold starts each with one run right before it.
        process_loop = machine.walk_read_hash_process(root)
        loop["walk_read_hash_process_s"] = process_loop["wall_s"]
        loop["walk_read_hash_process_cpu_s"] = process_loop["cpu_s"]
        log(
            f"catalog {name}: {stats}; bare loop {loop['read_hash_loop_s']:.3f} s, walk+read+hash process "
            f"{process_loop['wall_s']:.3f} s ({process_loop['cpu_s']:.3f} s CPU)"
        )
        entry: dict[str, Any] = {"description": description, "root": str(root), "stats": stats, "machine": loop}
        workload: Workload | None = None
        runs: dict[str, PeerRun] = {}
        live: dict[str, Live] = {}
        try:
            for peer in peers:
                if peer == "skillwire":
                    run, workload = await run_skillwire(name, root, workdir, settings, workload, stats["skills"], live)
                elif peer == "fastmcp":
                    run, workload = await run_fastmcp(
                        name, root, workdir, settings, workload, process_loop["wall_s"], stats["skills"]
                    )
                else:
                    run, workload = await run_server_only(
                        peer, name, root, workdir, settings, workload, process_loop["wall_s"], stats["skills"], live
                    )
                runs[peer] = run
            if live and workload is not None:
                try:
                    await side_by_side(live, workload, settings)
                except Exception as exc:
                    traceback.print_exc(file=sys.stderr)
                    for item in live.values():
                        for key in LATENCY_KEYS:
                            item.run.metrics.setdefault(key, status("failed", f"{type(exc).__name__}: {exc}"[:300]))
        finally:
            for item in live.values():
                rss = item.server.peak_rss_mb()  # VmHWM: the peak over everything above
                unknown = status("n/a", "/proc/<pid>/status is unavailable")
                item.run.set("peak_rss_mb", rss if rss is not None else unknown)
                item.server.stop()
                item.run.skip_rest("not reached")
        peer_results = {peer: {key: run.metrics.get(key) for key, *_ in METRICS} for peer, run in runs.items()}
        extras = {peer: run.extra for peer, run in runs.items()}
        entry["peers"] = peer_results
        entry["extra"] = extras
        if workload is not None:
            entry["workload"] = {
                "load_skill": workload.load.uri,
                "load_files": len(workload.load.files),
                "load_bytes": workload.load.total,
                "get_samples": len(workload.get_uris),
                "small_files": len(workload.small),
                "large_files": len(workload.large),
                "watched_file": workload.watch_file,
            }
        # skillwire's advantage over each other peer; "advantage" alone is over FastMCP (the chart's ratio).
        if "skillwire" in peer_results:
            entry["advantage_over"] = {
                other: {
                    key: adv
                    for key, *_ in METRICS
                    if (adv := advantage(key, peer_results["skillwire"][key], peer_results[other][key])) is not None
                }
                for other in peer_results
                if other != "skillwire"
            }
            if "fastmcp" in entry["advantage_over"]:
                entry["advantage"] = entry["advantage_over"]["fastmcp"]
        overhead = observability_overhead(peer_results, extras)
        if overhead:
            entry["observability_overhead"] = overhead
        entry["seconds"] = time.perf_counter() - began
        results["catalogs"][name] = entry
        log(f"catalog {name}: done in {entry['seconds']:.0f} s")
    results["targets"] = targets(results)
    results["meta"]["load_average_at_end"] = load_average()
    return results


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m bench.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--catalogs", default=DEFAULT_CATALOGS, help=f"comma-separated (default {DEFAULT_CATALOGS})")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated: {','.join(PEERS)}")
    parser.add_argument("--quick", action="store_true", help="few samples, short budgets (a smoke run)")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "skillwire-bench-suite",
        help="generated catalogs and server logs (reused between runs)",
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"raw results (default {DEFAULT_JSON})")
    parser.add_argument("--png", type=Path, default=DEFAULT_PNG, help=f"chart (default {DEFAULT_PNG})")
    parser.add_argument("--no-png", action="store_true", help="do not draw the chart")
    parser.add_argument(
        "--list-repeats",
        type=int,
        help=f"whole listings per peer (default {Settings.list_repeats}; {OVERHEAD_LIST_REPEATS} with the obs-* peers)",
    )
    parser.add_argument("--get-samples", type=int, help=f"skills/get requests (default {Settings.get_samples})")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else Settings()
    overhead = any(peer.strip() in OVERHEAD_PEERS for peer in args.peers.split(","))
    if args.list_repeats is not None or (overhead and not args.quick):
        settings = replace(settings, list_repeats=max(1, args.list_repeats or OVERHEAD_LIST_REPEATS))
    if args.get_samples is not None:
        settings = replace(settings, get_samples=max(1, args.get_samples))

    atexit.register(stop_all)

    def terminate(signum: int, _frame: object) -> None:
        stop_all()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    began = time.perf_counter()
    try:
        results = anyio.run(run_all, args, settings, argv)
    finally:
        stop_all()
    results["meta"]["total_seconds"] = time.perf_counter() - began
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")
    if not args.no_png:
        from bench.chart import draw

        args.png.parent.mkdir(parents=True, exist_ok=True)
        draw(results, args.png)
    print(table(results))
    print(f"\nraw numbers: {args.json}" + ("" if args.no_png else f"\nchart: {args.png}"))
    print(f"total: {results['meta']['total_seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
