"""The catalog page's server time at 10,000 skills (issue 39): `python -m bench.page_bench [--skills N]`.

Builds two generated catalogs and serves each through the routes `serve --http` mounts at `/` (`web/app.py`
over `server/page_view.py`, once for everyone and once with per-caller views as `--tokens` makes them):
bench/generate.py's N skills of 10 files for the list and skill pages, and bench/search_tool_bench.py's N
one-file skills whose words are drawn from twelve (each query word matches a quarter of the catalog: the worst
case for ranking) for the search box. Each request is timed from the moment the ASGI app gets it to its last
byte: routing, the view, the template, the safety headers. No socket: the server's own time, not the network's.
Prints the median and the 95th percentile of each kind of page; the budgets are 20 ms for the list page and
a skill page, 10 ms for a search, held by the median (the 95th percentile on a shared machine is mostly other
processes and the collector). The first search, which builds the search index, is timed once on its own.
`--workdir DIR` keeps the generated catalogs for the next run (generating 100,000 files takes minutes).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
from starlette.applications import Starlette

from bench.generate import generate_catalog
from bench.search_tool_bench import WORDS, write_catalog
from skillwire.catalog.catalog import SkillCatalog
from skillwire.server.app import page_site
from skillwire.server.extension import SkillsExtension
from skillwire.server.page_view import ServedPages
from skillwire.server.visibility import PerCallerSkills, StaticTokens
from skillwire.web.app import TOKEN_COOKIE, page_routes

BUDGET_MS = {"list": 20.0, "list, page 100": 20.0, "skill": 20.0, "search": 10.0}


async def timed_get(app: Any, path: str, cookie: str | None = None) -> tuple[float, int, int]:
    """One GET through the ASGI app: (milliseconds, status, body bytes)."""
    target, _, query = path.partition("?")
    headers = [(b"host", b"127.0.0.1:8765")]
    if cookie is not None:
        headers.append((b"cookie", f"{TOKEN_COOKIE}={cookie}".encode()))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": target, "raw_path": target.encode(), "query_string": query.encode(), "root_path": "",
        "headers": headers, "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8765),
    }  # fmt: skip
    status = 0
    size = 0

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, size
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            size += len(message.get("body", b""))

    started = time.perf_counter()
    await app(scope, receive, send)
    return (time.perf_counter() - started) * 1000, status, size


def build(catalog: SkillCatalog, hidden: tuple[str, ...]) -> tuple[Any, str | None, ServedPages]:
    """The page's routes over `catalog`: one catalog for everyone when `hidden` is empty, else per-caller
    views (`--tokens`) for a caller who may not see the skills under those prefixes."""
    if not hidden:
        pages = ServedPages(SkillsExtension(catalog))
        return Starlette(routes=page_routes(page_site(pages, "127.0.0.1"))), None, pages
    skills = PerCallerSkills(catalog, rules=tuple((prefix, frozenset({"secret"})) for prefix in hidden))
    tokens = StaticTokens([{"client": "bench", "token": "bench-token", "audiences": ["others"]}])
    pages = ServedPages(skills, tokens)
    return Starlette(routes=page_routes(page_site(pages, "127.0.0.1"))), "bench-token", pages


async def rounds_of(app: Any, cookie: str | None, paths: dict[str, str], rounds: int) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    for name, path in paths.items():
        times = []
        for _ in range(rounds):
            elapsed, status, _ = await timed_get(app, path, cookie)
            assert status == 200, (name, status)
            times.append(elapsed)
        times.sort()
        results[name] = {
            "median_ms": statistics.median(times),
            "p95_ms": times[int(len(times) * 0.95) - 1],
            "budget_ms": BUDGET_MS[name],
        }
    return results


async def measure_pages(app: Any, cookie: str | None, rounds: int) -> dict[str, dict[str, float]]:
    """The list, a page 100 pages in (by its keyset cursor, as a person paging on holds it), a skill page."""
    cursor_path = "/"
    for _ in range(100):
        html = await _get_text(app, cursor_path, cookie)
        found = re.search(r'rel="next" href="([^"]*)"', html)
        if found is None:
            break
        cursor_path = found.group(1).replace("&amp;", "&")
    skill = "/skill?" + urlencode({"uri": "skill://team07/skill-00007/SKILL.md"})
    return await rounds_of(app, cookie, {"list": "/", "list, page 100": cursor_path, "skill": skill}, rounds)


async def measure_search(app: Any, cookie: str | None, pages: ServedPages, rounds: int) -> dict[str, dict[str, float]]:
    """The first search (it builds the index: names and descriptions, the bodies in a background thread),
    timed once; then, every body indexed, searches of mixed words, each a quarter of the catalog's skills."""
    first, status, _ = await timed_get(app, "/?" + urlencode({"q": WORDS[0]}), cookie)
    assert status == 200, status
    pages.finder.index.wait_for_bodies(timeout=600)
    queries = [f"{WORDS[i % 12]} {WORDS[(i * 5 + 1) % 12]}" for i in range(12)]
    times: list[float] = []
    for round_ in range(rounds):
        elapsed, status, _ = await timed_get(app, "/?" + urlencode({"q": queries[round_ % 12]}), cookie)
        assert status == 200, status
        times.append(elapsed)
    times.sort()
    return {
        "first search (builds the index)": {"median_ms": first},
        "search": {
            "median_ms": statistics.median(times),
            "p95_ms": times[int(len(times) * 0.95) - 1],
            "budget_ms": BUDGET_MS["search"],
        },
    }


async def _get_text(app: Any, path: str, cookie: str | None) -> str:
    chunks: list[bytes] = []
    target, _, query = path.partition("?")
    headers = [(b"host", b"127.0.0.1:8765")] + ([(b"cookie", f"{TOKEN_COOKIE}={cookie}".encode())] if cookie else [])
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": target, "raw_path": target.encode(), "query_string": query.encode(), "root_path": "",
             "headers": headers, "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8765)}  # fmt: skip

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return b"".join(chunks).decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--workdir", type=Path, help="where the generated catalogs are kept (reused)")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="page-bench-") as scratch:
        workdir = args.workdir or Path(scratch)
        files_root = workdir / f"files-{args.skills}"
        if not (files_root / ".complete").exists():
            generate_catalog(files_root, args.skills, 10)
            (files_root / ".complete").touch()
        search_root = write_catalog(workdir / f"search-{args.skills}", args.skills)
        files_catalog = SkillCatalog([files_root])
        files_catalog.refresh()
        search_catalog = SkillCatalog([search_root])
        search_catalog.refresh()
        report: dict[str, Any] = {"skills": args.skills}
        # Per caller: the caller may not see one team of fifty (the page catalog) or the first hundred skills.
        for label, hidden_team, hidden_skills in (
            ("one catalog", (), ()),
            ("per caller (--tokens)", ("skill://team00",), tuple(f"skill://skill-{i:05d}" for i in range(100))),
        ):
            app, cookie, _ = build(files_catalog, hidden_team)
            numbers = anyio.run(measure_pages, app, cookie, args.rounds)
            app, cookie, pages = build(search_catalog, hidden_skills)
            numbers.update(anyio.run(measure_search, app, cookie, pages, args.rounds))
            report[label] = numbers
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"catalog page, {args.skills:,} skills, server time per request ({args.rounds} rounds)")
    for label in ("one catalog", "per caller (--tokens)"):
        print(f"  {label}:")
        for name, numbers in report[label].items():
            if "p95_ms" not in numbers:
                print(f"    {name:<15} {numbers['median_ms']:8.1f} ms (once)")
                continue
            verdict = "ok" if numbers["median_ms"] <= numbers["budget_ms"] else "OVER BUDGET"
            print(
                f"    {name:<15} median {numbers['median_ms']:6.2f} ms   p95 {numbers['p95_ms']:6.2f} ms"
                f"   (budget {numbers['budget_ms']:.0f} ms, median: {verdict})"
            )


if __name__ == "__main__":
    main()
