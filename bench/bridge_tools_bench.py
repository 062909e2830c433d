"""How fast the model tools answer on a big catalog: `list_skills` over a 10,000-skill upstream.

    python -m bench.bridge_tools_bench [--skills 10000] [--workdir DIR] [--json FILE]

One `skillwire serve` subprocess on 127.0.0.1 serves a generated catalog (bench/generate.py, plus three
"needle" skills with distinctive descriptions); a `SkillHost` lists it once (timed: that is the
upstream's cost, not the tools'), then `SkillTools`:

- first page: the first `list_skills` call after the upstream listing is cached (it sorts the registry),
  then the same call repeated (p50);
- query: the first `list_skills(query=...)` (it builds the FTS5 index), then repeated queries (p50),
  each checked to rank its needle first on page 1;
- a `nextCursor` page from the middle of the catalog.

The issue's target is under 1 s for the first page and for a query once the listing is cached; the
cold (index-building) numbers are the ones held to it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from bench.generate import generate_catalog
from bench.peers import Started, skillwire_argv, start, stop_all
from skillwire.host.host import SkillHost
from skillwire.host.policy import DenyAll
from skillwire.host.tools import SkillTools

TARGET_S = 1.0
# (folder, description, query that must rank it first)
NEEDLES = [
    ("vat-returns", "Reconcile quarterly VAT returns for Norwegian subsidiaries.", "norwegian vat"),
    ("kiln-schedule", "Plan firing schedules for a ceramics kiln, cone by cone.", "ceramics kiln firing"),
    ("sonar-tuning", "Tune sonar transducers on survey vessels.", "transducer"),
]


def write_needles(root: Path) -> None:
    for name, description, _ in NEEDLES:
        folder = root / "zz-needles" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n")


async def timed_call(tools: SkillTools, arguments: dict[str, str]) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    result = await tools.call("list_skills", arguments)
    elapsed = time.perf_counter() - started
    if result.is_error or result.structured is None:
        raise RuntimeError(f"list_skills {arguments} failed: {result.text[:300]}")
    return elapsed, result.structured


async def measure(url: str, expected: int, repeats: int) -> dict[str, Any]:
    async with SkillHost(policy=DenyAll(), use_cache=False) as host:
        await host.add_server("big", url)
        started = time.perf_counter()
        listed = await host.list_skills()
        upstream_s = time.perf_counter() - started
        if len(listed) != expected:
            raise RuntimeError(f"the upstream listed {len(listed)} skills, not {expected}")
        tools = SkillTools(host)

        first_page_s, page = await timed_call(tools, {})
        if page["total"] != expected:
            raise RuntimeError(f"list_skills reports {page['total']} skills, not {expected}")
        warm_pages = [(await timed_call(tools, {}))[0] for _ in range(repeats)]

        first_query_s, found = await timed_call(tools, {"query": NEEDLES[0][2]})
        ranks: dict[str, int | None] = {}
        warm_queries: list[float] = []
        for _ in range(max(1, repeats // len(NEEDLES))):
            for name, _, query in NEEDLES:
                elapsed, found = await timed_call(tools, {"query": query})
                warm_queries.append(elapsed)
                uris = [s["uri"] for s in found["skills"]]
                wanted = f"skill://zz-needles/{name}/SKILL.md"
                ranks[query] = uris.index(wanted) + 1 if wanted in uris else None

        cursor_s = None
        cursor = page.get("nextCursor")
        for _ in range(expected // tools.page_size // 2):  # walk to the middle, time the last page
            if cursor is None:
                break
            cursor_s, next_page = await timed_call(tools, {"cursor": cursor})
            cursor = next_page.get("nextCursor")

    return {
        "skills": expected,
        "upstream_list_s": round(upstream_s, 3),
        "first_page_s": round(first_page_s, 4),
        "page_p50_s": round(statistics.median(warm_pages), 4),
        "first_query_s": round(first_query_s, 4),
        "query_p50_s": round(statistics.median(warm_queries), 4),
        "middle_cursor_page_s": None if cursor_s is None else round(cursor_s, 4),
        "needle_rank": ranks,
        "target_s": TARGET_S,
        "meets_target": first_page_s < TARGET_S and first_query_s < TARGET_S and all(r == 1 for r in ranks.values()),
    }


@contextlib.asynccontextmanager
async def needle_upstream(skills: int, workdir: Path, name: str) -> AsyncIterator[Started]:
    """A `skillwire serve` upstream on 127.0.0.1 over `skills` generated skills (3 files each) plus the
    needles, stopped on exit; both bridge benches measure against it."""
    root = generate_catalog(workdir / f"{name}-catalog-{skills}", skills, files_per_skill=3)
    write_needles(root)
    started = await start(
        "skillwire",
        skillwire_argv(root, watch=False, page_size=2000),
        workdir / "logs" / f"{name}-bench-{time.time_ns()}.log",
        budget=600,
    )
    try:
        yield started
    finally:
        stop_all()


async def run(skills: int, workdir: Path, repeats: int) -> dict[str, Any]:
    async with needle_upstream(skills, workdir, "tools") as started:
        report = await measure(started.server.url, skills + len(NEEDLES), repeats)
    report["server_start_s"] = round(started.first_list_s, 2)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bridge_tools_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, default=10_000, help="generated skills on the upstream (default 10000)")
    parser.add_argument("--repeats", type=int, default=15, help="repeated calls for the p50 numbers")
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "skillwire-bench-tools", help="catalog and logs"
    )
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    report = anyio.run(run, args.skills, args.workdir, args.repeats)
    lines = [
        f"list_skills on {report['skills']:,} skills (one skillwire serve upstream over HTTP on 127.0.0.1)",
        f"  upstream skills/list, all pages (host, not the tools): {report['upstream_list_s']:.3f} s",
        f"  first page, listing cached:   {report['first_page_s'] * 1000:8.1f} ms  (repeated p50 "
        f"{report['page_p50_s'] * 1000:.1f} ms)",
        f"  first query (builds index):   {report['first_query_s'] * 1000:8.1f} ms  (repeated p50 "
        f"{report['query_p50_s'] * 1000:.1f} ms)",
        f"  a page from the middle by cursor: {(report['middle_cursor_page_s'] or 0) * 1000:.1f} ms",
        f"  needle rank per query: {report['needle_rank']}",
        f"  target < {TARGET_S:.0f} s each: {'met' if report['meets_target'] else 'NOT met'}",
    ]
    print("\n".join(lines))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if report["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
