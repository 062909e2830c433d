"""The server's `find_skills` tool: server time of its answers at 10,000 skills with bodies, and its index's memory.

    python -m bench.search_tool_bench [--skills 10000] [--workdir DIR] [--json FILE]

The catalog is `--skills` generated folders, one SKILL.md each, whose words are drawn from twelve (as
`bench.search_eval --scale`), so every query word matches a quarter of the skills: the worst case for
ranking, not a typical catalog. Served from a folder catalog as `skillwire serve` serves it, with the
index in a file as `serve` keeps it. Measured, in wall time of `SkillFinder.answer` (the server's work for
one `tools/call`, without the transport) and process CPU time:

- the first answer on a new index (names and descriptions indexed, bodies after it in the background),
- the first answer of a restarted server over the index file (a new catalog object, as after a restart),
- warm answers (first page of 10 and the total) over mixed queries once every body is indexed, p50/p90,
- the same answers through the SDK's in-memory client (`tools/call` in and out, for scale),
- RSS: what the index adds after its build and queries, and the process's peak growth.
Targets (issue 36): warm p50 <= 5 ms, restart <= 150 ms, new index <= 300 ms, <= 40 MB at 10,000.
"""

from __future__ import annotations

import argparse
import functools
import json
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.server.app import build_server
from skillwire.server.extension import SkillsExtension
from skillwire.server.search_tool import SkillFinder

WORDS = ["deploy", "invoice", "schema", "render", "audit", "billing"]
WORDS += ["cluster", "lint", "diagram", "ticket", "forecast", "budget"]
QUERIES = [
    "render the invoice diagram",
    "audit the cluster budget forecast before deploy",
    "lint",
    "billing schema",
    "a ticket for the forecast",
]


def write_catalog(root: Path, count: int) -> Path:
    marker = root / f".complete-{count}"
    if marker.exists():
        return root
    for i in range(count):
        name = f"skill-{i:05d}"
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        body = (
            f"# {name}\n\n## When to use\n\nUse it for {WORDS[i % 12]} and {WORDS[(i * 7) % 12]} tasks.\n\n"
            + f"Steps: check the {WORDS[(i * 5) % 12]} first, then write the result. " * 20
        )
        text = f"---\nname: {name}\ndescription: Helps with {WORDS[i % 12]} work for team {i % 97}.\n---\n{body}"
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
    marker.touch()
    return root


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def timed(action: Callable[[], object]) -> tuple[float, float]:
    """(wall ms, CPU ms of the whole process: the background body thread counts too)."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def finder_for(catalog: SkillCatalog, index: Path) -> SkillFinder:
    extension = SkillsExtension(catalog)
    return SkillFinder(lambda: catalog.snapshot, extension.request_snapshot, index_path=index)


def run(count: int, workdir: Path) -> dict[str, Any]:
    root = write_catalog(workdir / f"catalog-{count}", count)
    index = workdir / "search.sqlite"
    for stale in workdir.glob("search.sqlite*"):
        stale.unlink()
    catalog = SkillCatalog([root], digest_cache=DigestCache())
    snapshot = catalog.snapshot
    assert len(snapshot) == count
    before, peak_before = rss_bytes(), peak_rss_bytes()

    finder = finder_for(catalog, index)
    first_query = "ceramics kiln firing schedule for the deploy"
    new_wall, new_cpu = timed(lambda: finder.answer(snapshot, first_query, None, 10))
    partial = finder.index.bodies_pending
    background_wall, _ = timed(finder.index.wait_for_bodies)
    warm: list[float] = []
    for _ in range(3):  # every word's postings read once (a word's first use), then timed
        for query in QUERIES:
            finder.answer(snapshot, query, None, 10)
    for _ in range(40):
        for query in QUERIES:
            warm.append(timed(functools.partial(finder.answer, snapshot, query, None, 10))[0])
    grown = rss_bytes() - before
    peak = peak_rss_bytes() - peak_before

    async def through_sdk() -> list[float]:
        skills = SkillsExtension(catalog, search_tool=True)
        assert skills.finder is not None
        skills.finder.index = finder.index  # the warm index: only the SDK's tools/call path is added
        times: list[float] = []
        async with Client(build_server(skills)) as client:
            for _ in range(10):
                for query in QUERIES:
                    started = time.perf_counter()
                    await client.call_tool("find_skills", {"query": query})
                    times.append((time.perf_counter() - started) * 1000)
        return times

    sdk = anyio.run(through_sdk)
    finder.index.close()

    restarted = SkillCatalog([root], digest_cache=DigestCache())  # a new process's catalog and snapshot
    fresh = restarted.snapshot  # its scan is the catalog's start-up, not the index's
    again = finder_for(restarted, index)
    restart_wall, restart_cpu = timed(lambda: again.answer(fresh, first_query, None, 10))
    assert again.index.indexed == 0, "a restart over the same catalog re-indexed rows"
    again.index.close()
    return {
        "skills": count,
        "new_index_first_answer_ms": new_wall,
        "new_index_first_answer_cpu_ms": new_cpu,
        "bodies_pending_at_first_answer": partial,
        "bodies_in_background_ms": background_wall,
        "restart_first_answer_ms": restart_wall,
        "restart_first_answer_cpu_ms": restart_cpu,
        "warm_p50_ms": statistics.median(warm),
        "warm_p90_ms": statistics.quantiles(warm, n=10)[-1],
        "warm_max_ms": max(warm),
        "sdk_call_p50_ms": statistics.median(sdk),
        "index_rss_mb": grown / 1e6,
        "peak_rss_growth_mb": peak / 1e6,
        "index_file_mb": index.stat().st_size / 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search_tool_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--workdir", type=Path, help="where the generated catalog is kept (reused)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.workdir or Path(scratch)
        workdir.mkdir(parents=True, exist_ok=True)
        numbers = run(args.skills, workdir)
    with open("/proc/loadavg") as loadavg:
        load = loadavg.read().split()[0]
    print(
        f"find_skills over {numbers['skills']:,} skills with bodies (load average {load}): first answer on a new "
        f"index {numbers['new_index_first_answer_ms']:.0f} ms ({numbers['bodies_pending_at_first_answer']:,} "
        f"bodies then indexed in the background in {numbers['bodies_in_background_ms']:.0f} ms); after a restart "
        f"{numbers['restart_first_answer_ms']:.0f} ms; warm p50 {numbers['warm_p50_ms']:.2f} ms "
        f"(p90 {numbers['warm_p90_ms']:.2f}, max {numbers['warm_max_ms']:.1f}); through the SDK's tools/call "
        f"p50 {numbers['sdk_call_p50_ms']:.2f} ms; index +{numbers['index_rss_mb']:.1f} MB RSS (peak "
        f"+{numbers['peak_rss_growth_mb']:.1f} MB), {numbers['index_file_mb']:.1f} MB of file"
    )
    print(
        "CPU time (the machine is shared; wall time above counts waiting for a core): first answer on a new index "
        f"{numbers['new_index_first_answer_cpu_ms']:.0f} ms, "
        f"after a restart {numbers['restart_first_answer_cpu_ms']:.0f} ms"
    )
    targets = [
        ("warm p50 <= 5 ms", numbers["warm_p50_ms"] <= 5),
        ("restart <= 150 ms (CPU)", numbers["restart_first_answer_cpu_ms"] <= 150),
        ("new index <= 300 ms (CPU)", numbers["new_index_first_answer_cpu_ms"] <= 300),
        ("index <= 40 MB peak", numbers["peak_rss_growth_mb"] <= 40),
    ]
    print("targets: " + ", ".join(f"{name}: {'met' if met else 'MISSED'}" for name, met in targets))
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
