"""Server-side catalog benchmark (issue: skillwire serve).

Measures, on generated catalogs of `--small` and `--skills` skills × 10 files:
  - cold scan (every file hashed) and a restart with the persistent digest cache (files hashed: 0);
  - the cost of one `skills/list` page of 100 through the official SDK's in-memory client, at random
    keyset positions, small catalog vs large (the ratio should stay near 1: a page is O(page));
  - an edit to one file under the watcher: time until `skills/get` shows the new digest and how many
    files were hashed for it (should be exactly 1).

    python -m bench.catalog_bench [--skills 10000] [--small 100] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client

from bench.generate import generate_catalog
from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.client.requests import get_skill_request, list_skills_request, send_raw
from skillwire.server.app import build_server
from skillwire.server.extension import SkillsExtension


def scan_times(root: Path, cache_file: Path) -> dict[str, Any]:
    cache_file.unlink(missing_ok=True)
    cold_cache = DigestCache(cache_file)
    started = time.perf_counter()
    snapshot = SkillCatalog([root], digest_cache=cold_cache).snapshot
    cold = time.perf_counter() - started
    warm_cache = DigestCache(cache_file)
    started = time.perf_counter()
    SkillCatalog([root], digest_cache=warm_cache).refresh()
    warm = time.perf_counter() - started
    return {
        "skills": len(snapshot.skill_by_uri),
        "files": len(snapshot.files),
        "cold_scan_s": cold,
        "cold_files_hashed": cold_cache.hashed,
        "warm_restart_s": warm,
        "warm_files_hashed": warm_cache.hashed,
    }


async def page_cost(root: Path, samples: int) -> dict[str, Any]:
    catalog = SkillCatalog([root])
    skills = SkillsExtension(catalog, page_size=100)
    server = build_server(skills)
    async with Client(server) as client:
        cursors: list[str | None] = [None]
        cursor: str | None = None
        while True:
            page = await send_raw(client, list_skills_request(cursor))
            cursor = page.get("nextCursor")
            if cursor is None:
                break
            cursors.append(cursor)
        rng = random.Random(1)
        timings = []
        for _ in range(samples):
            chosen = rng.choice(cursors)
            started = time.perf_counter()
            await send_raw(client, list_skills_request(chosen))
            timings.append(time.perf_counter() - started)
    timings.sort()
    return {
        "pages": len(cursors),
        "page_p50_ms": statistics.median(timings) * 1e3,
        "page_p99_ms": timings[int(len(timings) * 0.99) - 1] * 1e3,
    }


async def watcher_edit(root: Path) -> dict[str, Any]:
    catalog = SkillCatalog([root])
    skills = SkillsExtension(catalog)
    server = build_server(skills)
    snapshot = catalog.snapshot
    target_skill = snapshot.listed[len(snapshot.listed) // 2]
    target_file = next(f for f in target_skill.entry.files if not f.uri.endswith("SKILL.md"))
    disk_path = Path(str(snapshot.files[target_file.uri].path))
    original = disk_path.read_bytes()
    async with anyio.create_task_group() as group, Client(server) as client:
        group.start_soon(catalog.watch)
        await anyio.sleep(1.0)  # let the watcher arm itself
        hashed_before = catalog.digests.hashed
        started = time.perf_counter()
        disk_path.write_bytes(original + b"\nedited\n")
        seen = target_file.digest
        while seen == target_file.digest and time.perf_counter() - started < 30:
            await anyio.sleep(0.01)
            entry = await send_raw(client, get_skill_request(target_skill.uri))
            seen = next(f["digest"] for f in entry["skill"]["resources"] if f["uri"] == target_file.uri)
        latency = time.perf_counter() - started
        rehashed = catalog.digests.hashed - hashed_before
        group.cancel_scope.cancel()
    disk_path.write_bytes(original)
    return {"edit_visible_s": latency, "files_rehashed_for_edit": rehashed, "changed": seen != target_file.digest}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "skillwire-bench")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for label, count in (("small", args.small), ("large", args.skills)):
        root = generate_catalog(args.workdir / f"catalog-{count}", count)
        results[label] = scan_times(root, args.workdir / f"digests-{count}.sqlite")
        results[label].update(anyio.run(page_cost, root, args.samples))
    results["large"].update(anyio.run(watcher_edit, args.workdir / f"catalog-{args.skills}"))
    ratio = results["large"]["page_p50_ms"] / results["small"]["page_p50_ms"]
    results["page_cost_ratio_large_vs_small"] = ratio

    print(f"{'':28}{'small':>14}{'large':>14}")
    for key in (
        "skills",
        "files",
        "cold_scan_s",
        "cold_files_hashed",
        "warm_restart_s",
        "warm_files_hashed",
        "pages",
        "page_p50_ms",
        "page_p99_ms",
    ):
        small, large = results["small"][key], results["large"][key]
        fmt = "{:>14.3f}" if isinstance(small, float) else "{:>14}"
        print(f"{key:28}" + fmt.format(small) + fmt.format(large))
    print(f"{'page cost ratio (large/small)':28}{ratio:>28.2f}")
    for key in ("edit_visible_s", "files_rehashed_for_edit", "changed"):
        print(f"{key:28}{results['large'][key]!s:>28}")
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "catalog_bench.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
