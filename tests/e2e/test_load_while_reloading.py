"""Load while reloading (issue 11, standing test): 16 clients against `skillwire serve` over HTTP on
127.0.0.1 while files are rewritten every 100 ms and the watcher swaps snapshots underneath them.

Every read is sandwiched between two `skills/get` of its skill: when both show the same digest for
the file (versions are never reused, so every snapshot in between published that digest), the bytes
served must hash to it; otherwise the answer may only be the documented "changed" error. Files
rewritten by rename must moreover come back as exactly one of the versions written, never torn.
Reported (run with `-s`): requests, errors by kind, p50/p99 latency, the server's RSS before and after.
`SKILLWIRE_LOAD_SECONDS` sets the duration (default 20).
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from support.rawhttp import RawSession
from support.servers import serve_http

CLIENTS = 16
SECONDS = float(os.environ.get("SKILLWIRE_LOAD_SECONDS", "20"))
WRITE_EVERY = 0.1
SKILLS = 6
CHANGED = "changed on the server"

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the server's RSS from /proc")


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


class Writer:
    """Rewrites files every 100 ms: `atomic.md` and SKILL.md by rename (every version recorded),
    `inplace.md` truncated and written in place (a scan or read may catch it half-written)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.versions: dict[str, set[str]] = {}  # uri -> digests of every version written by rename
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.writes = 0
        for index in range(SKILLS):
            name = f"skill-{index}"
            (root / name / "references").mkdir(parents=True)
            self.rename_write(name, "SKILL.md", self.skill_md(name, 0))
            self.rename_write(name, "references/atomic.md", b"atomic 0\n")
            (root / name / "references" / "inplace.md").write_bytes(b"in place 0\n")
            (root / name / "references" / "static.md").write_bytes(f"static {name}\n".encode() * 50)

    @staticmethod
    def skill_md(name: str, version: int) -> bytes:
        return f"---\nname: {name}\ndescription: Skill {name}.\n---\n# {name}\n\nversion {version}\n".encode()

    def rename_write(self, skill: str, rel: str, data: bytes) -> None:
        path = self.root / skill / rel
        with self.lock:
            self.versions.setdefault(f"skill://{skill}/{rel}", set()).add(sha(data))
        temp = path.with_name(f".{path.name}.tmp")  # dot-files are not served; the rename is atomic
        temp.write_bytes(data)
        os.replace(temp, path)

    def run(self) -> None:
        rng = random.Random(7)
        version = 0
        while not self.stop.wait(WRITE_EVERY):
            version += 1
            skill = f"skill-{rng.randrange(SKILLS)}"
            size = rng.choice([10, 300, 5000, 40_000])
            self.rename_write(skill, "references/atomic.md", f"atomic {version}\n".encode() * (size // 10 + 1))
            with open(self.root / skill / "references" / "inplace.md", "wb") as handle:
                handle.write(f"in place {version}\n".encode() * (size // 12 + 1))
            if version % 5 == 0:
                self.rename_write(skill, "SKILL.md", self.skill_md(skill, version))
            self.writes += 1


@dataclass
class Tally:
    requests: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    verified_reads: int = 0
    violations: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def merge(self, other: Tally) -> None:
        with self.lock:
            self.requests += other.requests
            self.errors += other.errors
            self.latencies += other.latencies
            self.verified_reads += other.verified_reads
            self.violations += other.violations


def error_kind(error: dict[str, Any]) -> str:
    message = str(error.get("message", ""))
    for known in (CHANGED, "Unknown skill", "Unknown resource", "Resource not found", "No such directory"):
        if known in message:
            return f"{error.get('code')} {known}"
    return f"{error.get('code')} {message[:80]}"


class LoadClient:
    def __init__(self, url: str, seed: int, deadline: float, writer: Writer) -> None:
        self.session = RawSession(url, timeout=30)
        self.rng = random.Random(seed)
        self.deadline = deadline
        self.writer = writer
        self.tally = Tally()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        answer = self.session.call(method, params)
        self.tally.latencies.append(time.perf_counter() - started)
        self.tally.requests[method] += 1
        if "error" in answer:
            self.tally.errors[error_kind(answer["error"])] += 1
        return answer

    def digest_of(self, skill_uri: str, file_uri: str) -> str | None:
        answer = self.call("skills/get", {"uri": skill_uri})
        for item in answer.get("result", {}).get("skill", {}).get("resources", []):
            if item["uri"] == file_uri:
                return str(item["digest"])
        return None

    def read_between_gets(self) -> None:
        skill = f"skill-{self.rng.randrange(SKILLS)}"
        skill_uri = f"skill://{skill}/SKILL.md"
        file_uri = self.rng.choice(
            [skill_uri, *(f"skill://{skill}/references/{n}.md" for n in ("atomic", "inplace", "static"))]
        )
        before = self.digest_of(skill_uri, file_uri)
        answer = self.call("resources/read", {"uri": file_uri})
        after = self.digest_of(skill_uri, file_uri)
        if "error" in answer:
            return  # counted by kind; the test checks which kinds occur
        [content] = answer["result"]["contents"]
        data = content["text"].encode() if "text" in content else base64.b64decode(content["blob"])
        served = sha(data)
        if before is not None and before == after and served != before:
            self.tally.violations.append(f"{file_uri}: served {served}, every snapshot in between published {before}")
        written = self.writer.versions.get(file_uri)
        if written is not None:
            with self.writer.lock:
                known = served in written
            if not known:
                self.tally.violations.append(f"{file_uri}: served bytes that were never written whole ({served})")
        self.tally.verified_reads += 1

    def run(self) -> None:
        while time.monotonic() < self.deadline:
            op = self.rng.random()
            if op < 0.15:
                self.call("skills/list", {})
            elif op < 0.35:
                self.call("skills/get", {"uri": f"skill://skill-{self.rng.randrange(SKILLS)}/SKILL.md"})
            elif op < 0.85:
                self.read_between_gets()
            else:
                folder = f"skill://skill-{self.rng.randrange(SKILLS)}" + self.rng.choice(["", "/references"])
                self.call("resources/directory/read", {"uri": folder})


@contextmanager
def writing(writer: Writer) -> Iterator[None]:
    thread = threading.Thread(target=writer.run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        writer.stop.set()
        thread.join(10)


def run_clients(url: str, seconds: float, writer: Writer, seed: int) -> Tally:
    deadline = time.monotonic() + seconds
    clients = [LoadClient(url, seed * 100 + i, deadline, writer) for i in range(CLIENTS)]
    threads = [threading.Thread(target=c.run, daemon=True) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 60)
        assert not thread.is_alive(), "a client hung"
    total = Tally()
    for client in clients:
        total.merge(client.tally)
    return total


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def test_sixteen_clients_while_files_are_rewritten_every_100_ms(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    writer = Writer(root)
    with serve_http([str(root), "--no-digest-cache"]) as server:
        pid = server.process.pid
        idle_kb = rss_kb(pid)
        with writing(writer):
            # Warm-up under the same load: the first requests build what a server keeps (directory
            # indexes, the SDK's per-session state), which is not growth.
            run_clients(server.url, min(4.0, SECONDS / 4), writer, seed=1)
            warm_kb = rss_kb(pid)
            started = time.monotonic()
            tally = run_clients(server.url, SECONDS, writer, seed=2)
            elapsed = time.monotonic() - started
            after_kb = rss_kb(pid)
        # After the writes stop and the watcher settles, every file is served exactly as on disk.
        time.sleep(1.0)
        final = RawSession(server.url)
        for index in range(SKILLS):
            for rel in ("SKILL.md", "references/atomic.md", "references/inplace.md"):
                disk = (root / f"skill-{index}" / rel).read_bytes()
                answer = final.call("resources/read", {"uri": f"skill://skill-{index}/{rel}"})
                for _ in range(20):  # the watcher may still be settling on the last write
                    if "result" in answer and answer["result"]["contents"][0]["text"].encode() == disk:
                        break
                    time.sleep(0.25)
                    answer = final.call("resources/read", {"uri": f"skill://skill-{index}/{rel}"})
                assert answer["result"]["contents"][0]["text"].encode() == disk, rel

    total = sum(tally.requests.values())
    growth = (after_kb - warm_kb) / warm_kb
    print(
        f"\nload while reloading: {CLIENTS} clients, {elapsed:.1f} s, {writer.writes} rewrite rounds every "
        f"{WRITE_EVERY * 1000:.0f} ms\n  requests {total} ({total / elapsed:.0f}/s): {dict(tally.requests)}\n"
        f"  errors by kind: {dict(tally.errors) or 'none'}\n"
        f"  reads verified against their snapshot's digest: {tally.verified_reads}, violations: "
        f"{len(tally.violations)}\n  latency p50 {percentile(tally.latencies, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(tally.latencies, 0.99) * 1000:.1f} ms\n  server RSS: idle {idle_kb / 1024:.1f} MB, "
        f"warm {warm_kb / 1024:.1f} MB, after {after_kb / 1024:.1f} MB ({growth:+.1%})"
    )
    assert tally.violations == []
    assert tally.verified_reads > 0
    allowed = {
        f"-32603 {CHANGED}",
        *(f"-32602 {kind}" for kind in ("Unknown skill", "Unknown resource", "No such directory")),
    }
    assert set(tally.errors) <= allowed, tally.errors
    # A skill is skipped for a moment only when a scan catches a file mid-write; most requests succeed.
    assert sum(tally.errors.values()) < total * 0.2, tally.errors
    assert percentile(tally.latencies, 0.99) < 5.0
    # Flat memory: issue 11 measured +50% in 45 s before the GC fix; the target is within 5%.
    assert growth < 0.10, f"server RSS grew {growth:+.1%} under load ({warm_kb} -> {after_kb} kB)"
