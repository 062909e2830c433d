"""`skillwire serve git+http://…`: a generated repository of 1,000 skills served over smart HTTP by
`git http-backend` on 127.0.0.1 (the tests' server, tests/support/gitserver.py).

Measured, each from a process start or a push:

- cold: an empty cache, `serve …@main` start → first `skills/list` answered (ls-remote, shallow fetch,
  checkout of the tree, scan and hash of every file, serve);
- cold with SUBDIR: the same for `#half` (half the skills), a partial fetch;
- warm: the cache holds the commit (and the digest cache its files): start → first answer again;
- new commit: a push that edits one skill, to the moment `skills/list` shows it, with `--poll 0.5`;
- the implementation choice: `git clone --depth=1` (and `--filter=blob:none --sparse`) against dulwich's
  `porcelain.clone(depth=1)` of the same repository, when dulwich is installed (it is not a dependency).

Prints the repository's size (files, bytes, its pack) and the numbers, and writes
bench/results/git_bench.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from bench.generate import catalog_stats, generate_catalog
from bench.measure import RawClient
from bench.peers import start

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests"))  # the git server the tests use

from support.gitserver import WorkRepo, git, git_http_server  # noqa: E402

POLL = 0.5


def _timed(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    return time.perf_counter() - started


def _dulwich_clone(url: str, target: Path) -> float | None:
    try:
        from dulwich import porcelain
    except ImportError:
        return None
    started = time.perf_counter()
    with open(os.devnull, "wb") as quiet:
        porcelain.clone(url, str(target), depth=1, errstream=quiet)
    return time.perf_counter() - started


async def _first_list(url_spec: str, cache: Path, log: Path) -> tuple[float, Any]:
    os.environ["XDG_CACHE_HOME"] = str(cache)
    argv = [sys.executable, "-m", "skillwire.cli.main", "serve", url_spec, "--http", "127.0.0.1:0"]  # kernel's port
    started = await start("skillwire", [*argv, "--poll", str(POLL)], log, budget=600)
    return started.first_list_s, started


async def _listing_commit(url: str) -> set[str]:
    commits: set[str] = set()
    async with RawClient(url) as client:
        cursor = None
        while True:
            page = await client.call("skills/list", {"cursor": cursor} if cursor else {})
            commits |= {s["_meta"]["io.skillwire/source"]["commit"] for s in page["skills"]}
            cursor = page.get("nextCursor")
            if not cursor:
                return commits


async def run(skills: int, files: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="skillwire-git-bench-"))
    results: dict[str, Any] = {"skills": skills, "files_per_skill": files}
    try:
        repo = WorkRepo(work / "work", work / "served" / "skills.git")
        generate_catalog(work / "gen", skills, files)
        for index, child in enumerate(sorted(p for p in (work / "gen").iterdir() if p.is_dir())):
            shutil.copytree(child, repo.work / ("half" if index % 2 == 0 else "rest") / child.name)
        stats = catalog_stats(repo.work)
        repo.commit("catalog")
        repo.push()
        git(repo.bare, "gc", "-q")
        pack_bytes = sum(p.stat().st_size for p in (repo.bare / "objects" / "pack").glob("*.pack"))
        results["repository"] = {**stats, "pack_bytes": pack_bytes}
        with git_http_server(work / "served") as server:
            url = server.url("skills.git")
            results["git_clone_depth1_s"] = _timed(["git", "clone", "-q", "--depth=1", url, str(work / "c1")], work)
            results["git_clone_sparse_half_s"] = _timed(
                ["git", "clone", "-q", "--depth=1", "--filter=blob:none", "--sparse", url, str(work / "c2")], work
            ) + _timed(["git", "sparse-checkout", "set", "half"], work / "c2")
            results["dulwich_clone_depth1_s"] = _dulwich_clone(url, work / "c3")

            cold, started = await _first_list(f"git+{url}@main", work / "cache-a", work / "a.log")
            results["cold_first_list_s"] = cold
            started.server.stop()
            cold_sub, started = await _first_list(f"git+{url}@main#half", work / "cache-b", work / "b.log")
            results["cold_subdir_first_list_s"] = cold_sub
            started.server.stop()
            warm, started = await _first_list(f"git+{url}@main", work / "cache-a", work / "a2.log")
            results["warm_first_list_s"] = warm
            mcp = f"http://127.0.0.1:{started.server.port}/mcp"
            victim = min((repo.work / "half").rglob("SKILL.md"))  # the generator nests skills in team folders
            victim.write_text(victim.read_text() + "\nEdited.\n")
            pushed = repo.commit("edit one skill")
            pushed_at = time.perf_counter()
            repo.push()
            while await _listing_commit(mcp) != {pushed}:
                await anyio.sleep(0.05)
                if time.perf_counter() - pushed_at > 300:
                    raise RuntimeError("the new commit was not served within 300 s")
            results["new_commit_to_list_s"] = time.perf_counter() - pushed_at
            results["poll_s"] = POLL
            started.server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--files", type=int, default=10, help="files per skill (SKILL.md included)")
    args = parser.parse_args()
    results = anyio.run(run, args.skills, args.files)
    results["load_average"] = os.getloadavg()
    out = REPO_ROOT / "bench" / "results" / "git_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
