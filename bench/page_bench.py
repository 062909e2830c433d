"""The catalog page's server time at 10,000 skills (issue 39): `python -m bench.page_bench [--skills N]`.

Builds a generated catalog (bench/generate.py: N skills of 10 files), serves it through the same routes
`serve --http` mounts at `/` (`web/app.py` over `server/page_view.py`, with per-caller views when `--tokens`
is given), and times each request from the moment the ASGI app gets it to its last byte: routing, the view,
the template, the safety headers. No socket, so the numbers are the server's own time, not the network's.
Prints the median and the 95th percentile of each kind of page; the budgets are 20 ms for the list page and
a skill page, 10 ms for a search, held by the median (the 95th percentile on a shared machine is mostly other
processes and the collector). The first search, which builds the search index, is timed once on its own.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
from starlette.applications import Starlette

from bench.generate import generate_catalog
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


def build(catalog: SkillCatalog, per_caller: bool) -> tuple[Any, str | None, ServedPages]:
    if not per_caller:
        pages = ServedPages(SkillsExtension(catalog))
        return Starlette(routes=page_routes(page_site(pages, "127.0.0.1"))), None, pages
    # The caller may see the skills of 49 of the 50 teams: a view of 9,800 skills, and a search within it.
    skills = PerCallerSkills(catalog, rules=(("skill://team00", frozenset({"team00"})),))
    tokens = StaticTokens([{"client": "bench", "token": "bench-token", "audiences": ["others"]}])
    pages = ServedPages(skills, tokens)
    return Starlette(routes=page_routes(page_site(pages, "127.0.0.1"))), "bench-token", pages


async def measure(app: Any, cookie: str | None, pages: ServedPages, rounds: int) -> dict[str, dict[str, float]]:
    _, status, _ = await timed_get(app, "/", cookie)
    assert status == 200, status
    # The first search builds the index (names and descriptions; bodies follow in a background thread):
    # timed once, then the bodies are let finish, and the steady state is what the rounds measure.
    first_search, status, _ = await timed_get(app, "/?" + urlencode({"q": "review"}), cookie)
    assert status == 200, status
    pages.finder.index.wait_for_bodies(timeout=600)
    # A cursor deep into the listing, as a person paging on would hold, and a skill page with files.
    cursor_path = "/"
    for _ in range(100):
        from re import search

        html = await _get_text(app, cursor_path, cookie)
        found = search(r'rel="next" href="([^"]*)"', html)
        if found is None:
            break
        cursor_path = found.group(1).replace("&amp;", "&")
    skill = "skill://team07/skill-00007/SKILL.md"
    results: dict[str, dict[str, float]] = {"first search (builds the index)": {"median_ms": first_search}}
    paths = {
        "list": "/",
        "list, page 100": cursor_path,
        "skill": "/skill?" + urlencode({"uri": skill}),
        "search": "/?" + urlencode({"q": "invoice template"}),
    }
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="page-bench-") as folder:
        root = generate_catalog(Path(folder) / "skills", args.skills, 10)
        report: dict[str, Any] = {"skills": args.skills}
        catalog = SkillCatalog([root])
        catalog.refresh()
        for label, per_caller in (("one catalog", False), ("per caller (--tokens)", True)):
            app, cookie, pages = build(catalog, per_caller)
            report[label] = anyio.run(measure, app, cookie, pages, args.rounds)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"catalog page, {args.skills:,} skills x 10 files, server time per request ({args.rounds} rounds)")
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
