"""The machine's own limits, measured on the same files the servers serve.

- `sha256_throughput`: hashlib SHA-256 over an in-memory buffer, in MB/s (no I/O at all).
- `import_times`: a bare interpreter's start, and one importing each server's modules (the fixed part
  of every server start).
- `compile_bytecode`: writes the `.pyc` files of every module the Python servers import, as `pip install`
  does, so no measured start compiles source (with PYTHONDONTWRITEBYTECODE set, as on these machines, every
  start compiled every module again: a seventh of a 10,000-skill cold start's CPU in the profile).
- `read_and_hash`: a bare Python loop that opens, reads and hashes every file of a catalog (in this
  process, over a file list made beforehand): the throughput shown beside each catalog.
- `walk_read_hash_process`: the same work as a server's cold start must do, measured the same way: a
  new interpreter walks the catalog (os.scandir), opens, reads and hashes every file, timed from process
  start to exit (wall) with its CPU time from `wait4`, on a page cache warmed just before. `bench.run`
  runs it right before each cold start it measures, so both see the same load (issue 25: a loop timed
  once, in-process, without the walk and at another load than the servers, made the ratio mix loads).
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.generate import catalog_files

REPO_ROOT = Path(__file__).resolve().parents[1]

MB = 1_000_000


def sha256_throughput(total: int = 256 * 1024 * 1024, chunk: int = 1024 * 1024) -> float:
    """MB/s of hashlib.sha256 over `total` bytes fed in `chunk`-sized pieces (best of 3)."""
    buffer = os.urandom(chunk)
    best = float("inf")
    for _ in range(3):
        digest = hashlib.sha256()
        started = time.perf_counter()
        for _ in range(total // chunk):
            digest.update(buffer)
        digest.hexdigest()
        best = min(best, time.perf_counter() - started)
    return total / best / MB


# What every Python peer imports while it starts (bench.peers), including what `serve` imports lazily.
SERVER_IMPORTS = (
    "skillwire.cli.main, skillwire.cli.serve, skillwire.catalog.catalog, skillwire.catalog.filesystem, "
    "skillwire.catalog.persist, skillwire.server.app, skillwire.server.extension, bench.floor_server, "
    "fastmcp, fastmcp.skills.provider, uvicorn.loops.auto, uvicorn.protocols.http.auto, pathspec"
)


def python_env() -> dict[str, str]:
    """The environment for the Python processes a benchmark starts: allowed to write bytecode, as a user's
    installed server is, so a module a start imports is compiled once, not on every start."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_bytecode() -> int:
    """Compile (once; later runs find them up to date) the modules the Python servers import; returns how
    many source files that covered."""
    listing = (
        f"import {SERVER_IMPORTS}, sys\n"
        "print('\\n'.join(f for m in list(sys.modules.values()) if (f := getattr(m, '__file__', None) or '')"
        ".endswith('.py')))"
    )
    env = python_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    files = subprocess.run([sys.executable, "-c", listing], check=True, capture_output=True, text=True, env=env).stdout
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-i", "-"], input=files, check=True, text=True, env=env)
    return len(files.split())


def read_and_hash(root: Path, runs: int = 3) -> dict[str, float]:
    """Seconds for the bare loop (best of `runs`), and the bytes and files it covered."""
    files = catalog_files(root)
    best = float("inf")
    total = 0
    for _ in range(runs):
        total = 0
        started = time.perf_counter()
        for path in files:
            with open(path, "rb") as handle:
                data = handle.read()
            hashlib.sha256(data).hexdigest()
            total += len(data)
        best = min(best, time.perf_counter() - started)
    return {"read_hash_loop_s": best, "read_hash_MBps": total / best / MB, "files": len(files), "bytes": total}


# A fresh interpreter (no imports beyond hashlib and os), so the loop pays process start as a server does.
_WALK_READ_HASH = """
import hashlib, os, sys
def walk(directory):
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                yield from walk(entry.path)
            elif entry.is_file(follow_symlinks=False):
                yield entry.path
root = sys.argv[1]
total = 0
for path in walk(root):
    if os.path.dirname(path) == root and os.path.basename(path).startswith(".complete-"):
        continue
    with open(path, "rb") as handle:
        data = handle.read()
    hashlib.sha256(data).hexdigest()
    total += len(data)
print(total)
"""


def walk_read_hash_process(root: Path) -> dict[str, float]:
    """One run of the bare walk + read + hash loop in a new interpreter, on a warm page cache: its wall
    seconds (process start to exit) and CPU seconds (user + system, from `wait4`), and the bytes read."""
    warm_page_cache(root)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", _WALK_READ_HASH, str(root)], stdout=subprocess.PIPE, env=python_env()
    )
    assert process.stdout is not None
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stdout.close()
    if process.returncode != 0:
        raise RuntimeError(f"the walk + read + hash loop failed with {process.returncode}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "bytes": int(output)}


def warm_page_cache(root: Path) -> int:
    """Read every file of a catalog once (returns the bytes read), so that the server started next reads
    it from the page cache, as a user's service does on its second start, and no server measured in a run
    pays disk reads that the ones after it skip."""
    total = 0
    for path in catalog_files(root):
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                total += len(chunk)
    return total


def import_times(runs: int = 3, *, parallel: bool = False) -> dict[str, float]:
    """Seconds (best of `runs`) for a bare interpreter, and for one that imports each server's modules.

    The fixed part of every start-up, before a single skill file is read. `parallel` (for smoke runs)
    starts the three at once: quicker, less exact.
    """
    programs = {
        "python": "pass",
        "skillwire": "import skillwire.cli.main, skillwire.cli.serve",
        "fastmcp": "import fastmcp, fastmcp.skills.provider",
        # What any server on the `mcp` SDK imports before it can answer: the floor under every
        # SDK-based server's start-up, skillwire's included.
        "mcp": "import mcp.server.lowlevel",
    }
    best = dict.fromkeys(programs, float("inf"))
    for _ in range(runs):
        groups = [list(programs)] if parallel else [[name] for name in programs]
        for group in groups:
            started = time.perf_counter()
            processes = {
                name: subprocess.Popen([sys.executable, "-c", programs[name]], env=python_env()) for name in group
            }
            for name, process in processes.items():
                if process.wait() != 0:
                    raise RuntimeError(f"python -c {programs[name]!r} failed")
                best[name] = min(best[name], time.perf_counter() - started)
    return best


def describe() -> dict[str, Any]:
    """CPU, cores, memory, OS and Python: what a reader needs to compare two runs."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_mb: float | None = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_mb = int(line.split()[1]) / 1024
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_mb": memory_mb,
        "os": platform.platform(),
        "python": sys.version.split()[0],
    }
