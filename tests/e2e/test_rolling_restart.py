"""A rolling restart under load drops no request (issue 23): two `skillwire serve s3://…` replicas of one
published catalog on a real SeaweedFS, behind Debian's HAProxy, with clients walking listings and getting
skills through it without pause while one replica gets SIGTERM, exits, and is started again.

HAProxy is configured as a load balancer in front of replicas ordinarily is: round robin, a health check
on `/healthz` every 200 ms (one failure takes a server out, two successes put it back), and HAProxy's
default retry policy, which retries a request only when the connection to a server failed before
anything was sent (`retry-on conn-failure`), redispatched to another server. It never replays a request
a server received, so a request the draining replica dropped would reach the client as a failure.
The drain is what makes it work: readiness turns 503 at once, the replica keeps serving for
`--drain-seconds` while the balancer notices, then finishes what is in flight and exits 0.

Listings page across both replicas (each page may come from either), which holds the shared
`SKILLWIRE_CURSOR_SECRET` to its word too.
"""

from __future__ import annotations

import json
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from servers import free_port
from support.apt_tool import apt_tool
from support.bridge import generate_skills
from support.calls import wait_for
from support.seaweed import SeaweedS3, env_without_aws

pytestmark = pytest.mark.anyio
SKILLWIRE = [sys.executable, "-m", "skillwire.cli.main"]
PROTOCOL = "2026-07-28"
DRAIN_SECONDS = 2.0
# Small pages, so a listing walk is several requests that round robin spreads over both replicas.
REPLICA_OPTIONS = ["--page-size", "4", "--drain-seconds", str(DRAIN_SECONDS), "--grace-seconds", "10", "--poll", "1"]


HAPROXY_CONFIG = """\
global
    maxconn 512
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    retries 3
    option redispatch
frontend skills
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /healthz
    http-check expect status 200
    default-server inter 200ms fall 1 rise 2
    server a 127.0.0.1:{a} check
    server b 127.0.0.1:{b} check
"""


@dataclass
class Replica:
    port: int
    log: Path
    env: dict[str, str]
    url: str
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [*SKILLWIRE, "serve", self.url, "--http", f"127.0.0.1:{self.port}", *REPLICA_OPTIONS],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=self.env,
            )
        wait_for(lambda: self.ready() or self.exited(), 90, f"replica on {self.port} to be ready")
        assert not self.exited(), self.log.read_text()

    def exited(self) -> bool:
        return self.process is None or self.process.poll() is not None

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def served(self, method: str) -> float:
        """`skillwire_requests_total` of this replica (its own /metrics, not through the balancer)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as response:
            text = response.read().decode()
        return sum(
            sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name == "skillwire_requests_total"
            and sample.labels.get("method") == method
            and sample.labels.get("outcome") == "ok"
        )

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@dataclass
class Load:
    """Clients through the balancer: each walks the whole listing page by page, then gets one skill."""

    url: str
    expected: int
    ok: int = 0
    failures: list[str] = field(default_factory=list)
    running: bool = True
    stamps: list[float] = field(default_factory=list)

    async def post(self, http: httpx2.AsyncClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
        meta = {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL,
            "io.modelcontextprotocol/clientInfo": {"name": "rolling", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": method,
        }
        try:
            response = await http.post(self.url, content=json.dumps(body).encode(), headers=headers)
        except httpx2.HTTPError as exc:
            raise AssertionError(f"{method}: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise AssertionError(f"{method}: HTTP {response.status_code}: {response.text[:200]}")
        message = json.loads(response.text)
        if "error" in message:
            raise AssertionError(f"{method}: {message['error']}")
        result: dict[str, Any] = message["result"]
        return result

    async def client(self) -> None:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as http:
            while self.running:
                try:
                    uris: list[str] = []
                    cursor: str | None = None
                    while True:
                        page = await self.post(http, "skills/list", {} if cursor is None else {"cursor": cursor})
                        self.ok += 1
                        uris += [s["uri"] for s in page["skills"]]
                        cursor = page.get("nextCursor")
                        if not cursor:
                            break
                    assert len(uris) == self.expected, f"a listing walk found {len(uris)} skills"
                    got = await self.post(http, "skills/get", {"uri": uris[self.ok % len(uris)]})
                    assert got["skill"]["uri"] in uris
                    self.ok += 1
                    self.stamps.append(time.monotonic())
                except AssertionError as exc:
                    self.failures.append(str(exc))
                    await anyio.sleep(0.05)


@pytest.fixture
def replicas(seaweedfs: SeaweedS3, tmp_path: Path) -> Iterator[tuple[Replica, Replica, int]]:
    root = tmp_path / "skills"
    generate_skills(root, "rolling", 18)
    url = seaweedfs.url("rolling-" + secrets.token_hex(4))
    env = env_without_aws() | seaweedfs.env | {"SKILLWIRE_CURSOR_SECRET": secrets.token_hex(32)}
    published = subprocess.run([*SKILLWIRE, "publish", str(root), url], env=env, capture_output=True, timeout=120)
    assert published.returncode == 0, published.stderr
    a = Replica(free_port(), tmp_path / "a.log", env, url)
    b = Replica(free_port(), tmp_path / "b.log", env, url)
    try:
        a.start()
        b.start()
        yield a, b, 18
    finally:
        a.stop()
        b.stop()


@pytest.fixture
def balancer(replicas: tuple[Replica, Replica, int], tmp_path: Path) -> Iterator[int]:
    """HAProxy in front of both replicas; its port, once it routes to them."""
    a, b, _ = replicas
    port = free_port()
    config = tmp_path / "haproxy.cfg"
    config.write_text(HAPROXY_CONFIG.format(port=port, a=a.port, b=b.port))
    with (tmp_path / "haproxy.log").open("wb") as log:
        proxy = subprocess.Popen(
            [apt_tool("haproxy"), "-db", "-f", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for(lambda: _answers(f"http://127.0.0.1:{port}/healthz"), 30, "haproxy to route")
        yield port
    finally:
        proxy.terminate()
        try:
            proxy.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proxy.kill()
            proxy.wait()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


async def test_sigterm_to_one_replica_under_load_fails_no_request_and_it_takes_traffic_again(
    replicas: tuple[Replica, Replica, int], balancer: int
) -> None:
    (a, b, skills), port = replicas, balancer
    load = Load(f"http://127.0.0.1:{port}/mcp", skills)
    try:
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(load.client)
            # Both replicas answer before anything happens (round robin, both healthy).
            await anyio.to_thread.run_sync(
                lambda: wait_for(lambda: a.served("skills/get") > 0 and b.served("skills/get") > 0, 30, "both serve")
            )
            assert a.process is not None
            sent = time.monotonic()
            a.process.send_signal(signal.SIGTERM)
            code = await anyio.to_thread.run_sync(lambda: a.process.wait(timeout=60) if a.process else None)
            stopped = time.monotonic()
            assert code == 0, a.log.read_text()[-2000:]
            during = sum(sent <= t <= stopped for t in load.stamps)
            served_by_b = b.served("skills/get")
            await anyio.sleep(1.0)  # a alone is gone: b carries everything
            assert b.served("skills/get") > served_by_b
            await anyio.to_thread.run_sync(a.start)
            restarted = time.monotonic()
            await anyio.to_thread.run_sync(lambda: wait_for(lambda: a.served("skills/get") > 0, 30, "a to serve"))
            back = time.monotonic() - restarted
            await anyio.sleep(1.0)
            load.running = False
    finally:
        load.running = False
    print(
        f"rolling restart: {load.ok} requests, {len(load.failures)} failed; {during} walks completed during a's "
        f"{stopped - sent:.1f} s drain; a restarted and served again {back:.1f} s after it was ready"
    )
    assert load.failures == [], load.failures[:5]
    assert load.ok > 50
    assert during > 0  # the load really ran through the drain
    assert "draining" in a.log.read_text()
