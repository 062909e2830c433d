"""A real Prometheus (Debian's, `apt_tool`) on 127.0.0.1 for the operations tests: it scrapes the targets
written to a file every second and, given rule files, evaluates them every second too."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers import free_port
from support.apt_tool import apt_tool
from support.calls import wait_for


def http_get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@dataclass
class Prometheus:
    api: str  # http://127.0.0.1:PORT
    targets: Path  # the file_sd file its one job reads

    def scrape(self, targets: Sequence[str]) -> None:
        """Scrape these `host:port` targets, each its own `instance`, from the next refresh on."""
        self.targets.write_text(json.dumps([{"targets": list(targets)}]))

    def query(self, promql: str) -> float | None:
        status, body = http_get(self.api + "/api/v1/query?" + urllib.parse.urlencode({"query": promql}))
        assert status == 200, body
        result = json.loads(body)["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    def vector(self, promql: str) -> dict[str, float]:
        """An instant vector's values by their `instance` label."""
        status, body = http_get(self.api + "/api/v1/query?" + urllib.parse.urlencode({"query": promql}))
        assert status == 200, body
        return {r["metric"].get("instance", ""): float(r["value"][1]) for r in json.loads(body)["data"]["result"]}

    def alerts(self) -> list[dict[str, Any]]:
        """Every alert Prometheus holds now (pending or firing), as its API gives them."""
        status, body = http_get(self.api + "/api/v1/alerts")
        assert status == 200, body
        alerts: list[dict[str, Any]] = json.loads(body)["data"]["alerts"]
        return alerts

    def rules_loaded(self) -> int:
        status, body = http_get(self.api + "/api/v1/rules")
        assert status == 200, body
        return sum(len(group["rules"]) for group in json.loads(body)["data"]["groups"])


def _ready(api: str) -> bool:
    try:
        return http_get(api + "/-/ready")[0] == 200
    except OSError:
        return False


@contextmanager
def running_prometheus(folder: Path, rule_files: Sequence[Path] = ()) -> Iterator[Prometheus]:
    """Prometheus with its data, config and log in `folder`; scrape and rule evaluation every second."""
    binary = apt_tool("prometheus")
    port = free_port()
    targets = folder / "targets.json"
    targets.write_text("[]")
    config = folder / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        + (f"rule_files: {json.dumps([str(path) for path in rule_files])}\n" if rule_files else "")
        + "scrape_configs:\n"
        "  - job_name: skillwire\n"
        "    file_sd_configs: [{files: ['" + str(targets) + "'], refresh_interval: 1s}]\n"
    )
    log = (folder / "prometheus.log").open("wb")
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={folder / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    api = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: process.poll() is not None or _ready(api), 60, "prometheus to answer /-/ready")
        if process.poll() is not None:
            raise RuntimeError(f"prometheus exited: {(folder / 'prometheus.log').read_text(errors='replace')}")
        yield Prometheus(api, targets)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
