"""Operating `skillwire serve` (issue 23): a real Prometheus scrapes `--workers 2` under load, SIGTERM
drains (readiness first, exit 0), Ctrl-C with workers is one line and 130, JSON logs parse line by
line and carry no secret, and every store or credential mistake is one line naming its cause, each
against a real SeaweedFS (`seaweedfs` fixture) on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest

from servers import free_port
from skillwire.ops.metrics import FLUSH_SECONDS
from support.calls import call, list_uris, wait_for
from support.prometheus import http_get, running_prometheus
from support.seaweed import SeaweedS3, env_without_aws
from support.servers import EXAMPLES, serve_http

SKILLWIRE = [sys.executable, "-m", "skillwire.cli.main"]


# -- a real Prometheus ------------------------------------------------------------------------------------


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A Prometheus on 127.0.0.1 (its API URL) and the file its scrape targets are written to."""
    with running_prometheus(tmp_path) as running:
        yield running.api, running.targets


def query(api: str, promql: str) -> float | None:
    status, body = http_get(api + "/api/v1/query?" + urllib.parse.urlencode({"query": promql}))
    assert status == 200, body
    result = json.loads(body)["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def test_prometheus_scrapes_two_workers_as_one_and_answers_the_counter_and_a_quantile(
    prometheus: tuple[str, Path],
) -> None:
    api, targets = prometheus
    with serve_http(["--workers", "2", "--no-snapshot-cache", str(EXAMPLES)]) as server:
        base = server.url.removesuffix("/mcp")
        targets.write_text(json.dumps([{"targets": [base.removeprefix("http://")]}]))
        uri = list_uris(server.url)[0]
        gets = 40
        for _ in range(gets):
            call(server.url, "skills/get", {"uri": uri})
        # Whichever worker answers the scrape, the total is both workers' (multi-process mode), once each
        # worker's flush thread has written its counts (within FLUSH_SECONDS; three for a loaded machine).
        time.sleep(FLUSH_SECONDS * 3)
        for _ in range(6):
            text = http_get(base + "/metrics")[1].decode()
            line = next(
                line
                for line in text.splitlines()
                if line.startswith("skillwire_requests_total{")
                and 'method="skills/get"' in line
                and 'outcome="ok"' in line
            )
            assert float(line.rsplit(" ", 1)[1]) == gets, line
        counter = 'sum(skillwire_requests_total{method="skills/get",outcome="ok"})'
        wait_for(lambda: query(api, counter) == gets, 60, f"prometheus to see {gets} skills/get")
        count = query(api, 'sum(skillwire_request_duration_seconds_count{method="skills/get"})')
        assert count == gets
        median = query(
            api, 'histogram_quantile(0.5, sum by (le) (skillwire_request_duration_seconds_bucket{method="skills/get"}))'
        )
        assert median is not None
        assert 0 < median < 5
        skills = query(api, "max(skillwire_catalog_skills)")
        assert skills == len(list_uris(server.url))


# -- drain and interrupt ----------------------------------------------------------------------------------


def start_serve(
    args: list[str], log: Path, env: dict[str, str] | None = None, debug: bool = False
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*SKILLWIRE, *(["--debug"] if debug else []), "serve", *args, "--http", f"127.0.0.1:{port}"],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    base = f"http://127.0.0.1:{port}"
    wait_for(lambda: process.poll() is not None or "listening on" in log.read_text(errors="replace"), 60, "serve")
    assert process.poll() is None, log.read_text()
    return process, base


def test_sigterm_turns_readiness_off_first_keeps_serving_then_exits_0(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    process, base = start_serve(["--no-snapshot-cache", "--drain-seconds", "3", str(EXAMPLES)], log)
    try:
        assert http_get(base + "/healthz")[0] == 200
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        wait_for(lambda: http_get(base + "/healthz")[0] == 503, 2, "readiness to turn off")
        _, body = http_get(base + "/healthz")
        assert json.loads(body)["draining"] is True
        assert http_get(base + "/livez")[0] == 200  # liveness stays separate
        assert list_uris(base + "/mcp")  # still serving while the balancer notices
        assert process.wait(timeout=30) == 0
        assert time.monotonic() - sent >= 2.5
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "draining" in log.read_text()


def test_ctrl_c_with_workers_is_one_line_and_130(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    process, _ = start_serve(["--workers", "2", "--no-snapshot-cache", str(EXAMPLES)], log)
    before = log.read_text()
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    assert process.wait(timeout=30) == 130
    after = log.read_text()[len(before) :].strip().splitlines()
    assert after == ["skillwire: interrupted; stopping the workers"], after


def test_no_metrics_serves_no_scrape_and_still_logs_requests(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    args = ["--no-metrics", "--log-requests", "--log-format", "json", "--no-snapshot-cache", str(EXAMPLES)]
    process, base = start_serve(args, log)
    try:
        assert list_uris(base + "/mcp")
        assert http_get(base + "/metrics")[0] == 404
        assert http_get(base + "/healthz")[0] == 200
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert any(e["event"] == "request" and e["method"] == "skills/list" for e in entries), entries


# -- logs -------------------------------------------------------------------------------------------------


CREDENTIALS = """\
import json, sys
print(json.dumps({"Version": 1, "AccessKeyId": sys.argv[1], "SecretAccessKey": sys.argv[2]}))
"""


def test_json_logs_parse_line_by_line_and_never_carry_a_secret(seaweedfs: SeaweedS3, tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    script = tmp_path / "credentials.py"
    script.write_text(CREDENTIALS)
    aws = tmp_path / "home" / ".aws"
    aws.mkdir()
    command = f"{sys.executable} {script} {seaweedfs.access_key} {seaweedfs.secret_key}"
    (aws / "config").write_text(f"[profile ops]\ncredential_process = {command}\n")
    env = env_without_aws() | {
        "HOME": str(tmp_path / "home"),
        "AWS_PROFILE": "ops",
        "AWS_ENDPOINT_URL": seaweedfs.endpoint,
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
    }
    url = seaweedfs.url("ops-logs-" + secrets.token_hex(4))
    published = subprocess.run([*SKILLWIRE, "publish", str(EXAMPLES), url], env=env, capture_output=True, timeout=120)
    assert published.returncode == 0, published.stderr
    token = "tok-" + secrets.token_hex(16)
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tokens": [{"client": "ci", "token": token, "audiences": ["metrics"]}]}))
    log = tmp_path / "serve.log"
    args = [url, "--tokens", str(tokens), "--log-format", "json", "--log-requests", "--poll", "0.5"]
    process, base = start_serve(args, log, env=env, debug=True)
    try:
        assert list_uris(base + "/mcp", token=token)
        refused = http_get(base + "/mcp", {"Authorization": "Bearer wrong-" + secrets.token_hex(16)})
        assert refused[0] == 401
        assert http_get(base + "/metrics", {"Authorization": f"Bearer {token}"})[0] == 200
        assert http_get(base + "/metrics")[0] == 401  # per-caller catalog: the scrape needs the token
        time.sleep(1.5)  # a few polls of the store, signed with the process's keys
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = log.read_text()
    entries: list[dict[str, Any]] = [json.loads(line) for line in text.splitlines() if line.strip()]
    events = {entry["event"] for entry in entries}
    assert {"serving", "listening", "request", "drain"} <= events, events
    requests = [entry for entry in entries if entry["event"] == "request"]
    assert all({"method", "outcome", "duration_ms"} <= set(entry) for entry in requests)
    assert any(entry["method"] == "skills/list" and entry["outcome"] == "ok" for entry in requests)
    for secret in (token, seaweedfs.secret_key, sha256(token.encode()).hexdigest()):
        assert secret not in text


# -- errors an operator can act on ------------------------------------------------------------------------


def store_error(env: dict[str, str], url: str, command: str = "serve") -> str:
    """The one line `command` (serve, publish) ends with on a store mistake: every command words a store's
    failure through one owner (`catalog.store.store_failure`)."""
    argv = {
        "serve": ["serve", url, "--http", f"127.0.0.1:{free_port()}"],
        "publish": ["publish", str(EXAMPLES), url],
    }[command]
    result = subprocess.run([*SKILLWIRE, *argv], env=env, capture_output=True, timeout=90)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert "<" not in lines[0]  # no XML from the store
    return lines[0]


def serve_error(env: dict[str, str], url: str) -> str:
    return store_error(env, url, "serve")


COMMANDS = pytest.mark.parametrize("command", ["serve", "publish"])


@pytest.fixture(scope="module")
def published(seaweedfs: SeaweedS3) -> str:
    url = seaweedfs.url("ops-errors")
    result = subprocess.run(
        [*SKILLWIRE, "publish", str(EXAMPLES), url], env=env_without_aws() | seaweedfs.env, capture_output=True
    )
    assert result.returncode == 0, result.stderr
    return url


@COMMANDS
def test_plain_http_without_the_flag_names_it(seaweedfs: SeaweedS3, published: str, command: str) -> None:
    env = env_without_aws() | seaweedfs.env
    del env["AWS_ALLOW_HTTP"]
    line = store_error(env, published, command)
    assert "plain HTTP" in line
    assert "AWS_ALLOW_HTTP=true" in line


@COMMANDS
def test_no_credentials_names_the_variables_and_never_asks_instance_metadata(
    seaweedfs: SeaweedS3, published: str, tmp_path: Path, command: str
) -> None:
    env = env_without_aws() | {"HOME": str(tmp_path)}
    line = store_error(env, published, command)
    assert "AWS_ACCESS_KEY_ID" in line
    assert "AWS_SECRET_ACCESS_KEY" in line
    assert "AWS_ENDPOINT_URL" in line
    assert "169.254" not in line
    env |= {"AWS_ENDPOINT_URL": seaweedfs.endpoint, "AWS_ALLOW_HTTP": "true"}
    line = store_error(env, published, command)
    assert "AWS_ACCESS_KEY_ID" in line
    assert "AWS_ENDPOINT_URL" not in line


@COMMANDS
def test_a_missing_bucket_is_one_line_naming_it(seaweedfs: SeaweedS3, published: str, command: str) -> None:
    line = store_error(env_without_aws() | seaweedfs.env, "s3://no-such-bucket/x", command)
    assert "bucket 'no-such-bucket' does not exist" in line


@COMMANDS
def test_wrong_credentials_are_one_line_each(seaweedfs: SeaweedS3, published: str, command: str) -> None:
    env = env_without_aws() | seaweedfs.env
    line = store_error(env | {"AWS_SECRET_ACCESS_KEY": "x" * 40}, published, command)
    assert "wrong credentials" in line
    assert "AWS_SECRET_ACCESS_KEY" in line
    line = store_error(env | {"AWS_ACCESS_KEY_ID": "nobody-knows-me"}, published, command)
    assert "wrong credentials" in line
    assert "AWS_ACCESS_KEY_ID" in line


@COMMANDS
def test_a_denied_request_is_one_line_naming_the_bucket(seaweedfs: SeaweedS3, published: str, command: str) -> None:
    env = env_without_aws() | seaweedfs.env
    env |= {"AWS_ACCESS_KEY_ID": seaweedfs.denied_access_key, "AWS_SECRET_ACCESS_KEY": seaweedfs.denied_secret_key}
    line = store_error(env, published, command)
    assert "access denied" in line
    assert "bucket 'skillwire'" in line


def test_every_worker_logs_its_requests(tmp_path: Path) -> None:
    # `--workers N` makes every worker but the first quiet (one summary, one "listening on"); the request
    # lines asked for with --log-requests must still come from all of them. Each request on a connection of
    # its own, so the kernel spreads them over both workers.
    log = tmp_path / "serve.log"
    args = ["--workers", "2", "--log-requests", "--log-format", "json", "--no-snapshot-cache", str(EXAMPLES)]
    process, base = start_serve(args, log)
    try:
        for _ in range(30):
            assert http_get(base + "/healthz")[0] == 200
            assert list_uris(base + "/mcp")
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip().startswith("{")]
    listed = [e for e in entries if e["event"] == "request" and e["method"] == "skills/list"]
    assert len(listed) >= 30, f"{len(listed)} of at least 30 listings logged"
    assert len({e["message"] for e in entries if e["event"] == "listening"}) == 1  # still one "listening on"
