"""`credential_process` profiles against the real SeaweedFS store (`seaweedfs` fixture, 127.0.0.1).

No AWS key is in the environment of these runs: the only way to the store's keys is a profile whose
`credential_process` is a small script printing them, run by skillwire without a shell; obstore signs
every request with what it printed, and asks again before its `Expiration`.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import obstore
import pytest

from servers import free_port
from skillwire.catalog.store import open_store, parse_location
from support.calls import call, healthz, list_uris, wait_for
from support.cli import run_cli
from support.seaweed import SeaweedS3, env_without_aws
from support.servers import EXAMPLES, serve_http

PROFILE = "skillwire-process"

# Prints the store's keys as Version 1 JSON, valid for LIFETIME seconds; appends a line to RUNS on
# each run; exits 3 with a message on stderr while the file FAIL exists.
CREDENTIALS_SCRIPT = """\
import json, os, sys
from datetime import datetime, timedelta, timezone
keys, runs, lifetime, fail = sys.argv[1:5]
with open(runs, "a") as log:
    log.write("run\\n")
if os.path.exists(fail):
    sys.exit("the credential broker is down")
with open(keys) as f:
    access, secret = json.load(f)
expires = datetime.now(timezone.utc) + timedelta(seconds=float(lifetime))
print(json.dumps({"Version": 1, "AccessKeyId": access, "SecretAccessKey": secret, "Expiration": expires.isoformat()}))
"""


class Broker:
    """The credential script of one test, and what it has done."""

    def __init__(self, root: Path, access: str, secret: str, lifetime: float) -> None:
        folder = root / "credential broker"  # a space: the command must be split as the AWS CLI does
        folder.mkdir()
        self.keys = folder / "keys.json"
        self.keys.write_text(json.dumps([access, secret]))
        self.runs_file = folder / "runs"
        self.fail_file = folder / "fail"
        self.script = folder / "print-credentials.py"
        self.script.write_text(CREDENTIALS_SCRIPT)
        words = [sys.executable, self.script, self.keys, self.runs_file, str(lifetime), self.fail_file]
        self.command = shlex.join(str(word) for word in words)

    @property
    def runs(self) -> int:
        return self.runs_file.read_text().count("run") if self.runs_file.exists() else 0


def profile_env(seaweedfs: SeaweedS3, tmp_path: Path, command: str) -> dict[str, str]:
    """The whole environment: no AWS key anywhere, the endpoint and region in the profile."""
    config = tmp_path / "aws-config"
    config.write_text(
        f"[profile {PROFILE}]\nregion = us-east-1\nendpoint_url = {seaweedfs.endpoint}\n"
        f"credential_process = {command}\n"
    )
    return {
        **env_without_aws(),
        "AWS_CONFIG_FILE": str(config),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials-file"),
        "AWS_PROFILE": PROFILE,
        "AWS_ALLOW_HTTP": "true",
    }


@contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    with mock.patch.dict(os.environ, env, clear=True):
        yield


def test_publish_and_serve_with_a_credential_process(seaweedfs: SeaweedS3, tmp_path: Path) -> None:
    broker = Broker(tmp_path, seaweedfs.access_key, seaweedfs.secret_key, lifetime=3600)
    env = profile_env(seaweedfs, tmp_path, broker.command)
    prefix = "process-" + secrets.token_hex(4)
    with environment(env):
        published = run_cli("publish", str(EXAMPLES), seaweedfs.url(prefix))
        assert published.code == 0, published.err
        assert "switched to index" in published.err
        assert broker.runs == 1  # one process for the whole publish: its credential lasts an hour
        with serve_http([seaweedfs.url(prefix), "--no-watch"]) as server:
            assert len(list_uris(server.url)) == 5
            text = call(server.url, "resources/read", {"uri": "skill://code-review/SKILL.md"})["contents"][0]["text"]
            assert text == (EXAMPLES / "code-review" / "SKILL.md").read_text()
            assert healthz(server.url)["lastError"] is None
        assert broker.runs == 2  # and one for the server


def test_the_process_is_run_again_before_expiry(seaweedfs: SeaweedS3, tmp_path: Path) -> None:
    """Credentials living 4 s: obstore asks the provider again as they near expiry, and every request
    of six seconds of them is signed with valid keys."""
    broker = Broker(tmp_path, seaweedfs.access_key, seaweedfs.secret_key, lifetime=4)
    prefix = "refresh-" + secrets.token_hex(4)
    with environment(profile_env(seaweedfs, tmp_path, broker.command)):
        store = open_store(parse_location(seaweedfs.url(prefix)))
        assert broker.runs == 1  # run when the store is opened, so a broken one is reported at once
        deadline = time.monotonic() + 6
        count = 0
        while time.monotonic() < deadline:
            obstore.put(store, f"probe-{count}", b"x")
            assert bytes(obstore.get(store, f"probe-{count}").bytes()) == b"x"
            count += 1
            time.sleep(0.1)
    assert count > 20
    assert 3 <= broker.runs <= 6, broker.runs  # about every 2 s (half the lifetime), not once per request


def test_a_failing_refresh_shows_in_health_and_recovers(seaweedfs: SeaweedS3, tmp_path: Path) -> None:
    broker = Broker(tmp_path, seaweedfs.access_key, seaweedfs.secret_key, lifetime=2)
    env = profile_env(seaweedfs, tmp_path, broker.command)
    prefix = "broker-" + secrets.token_hex(4)
    with environment(env):
        assert run_cli("publish", str(EXAMPLES), seaweedfs.url(prefix)).code == 0
        with serve_http([seaweedfs.url(prefix), "--poll", "0.5"]) as server:
            broker.fail_file.touch()

            def failing() -> bool:
                return "credential broker is down" in (healthz(server.url)["lastError"] or "")

            wait_for(failing, 15, "the failing credential_process in /healthz")
            error = healthz(server.url)["lastError"]
            assert f"credential_process of AWS profile '{PROFILE}' exited with 1: the credential broker is down" in (
                error
            )
            assert "\n" not in error
            assert "Debug source" not in error  # obstore's dump is not passed on
            assert len(list_uris(server.url)) == 5  # still serving the snapshot it has
            broker.fail_file.unlink()
            wait_for(lambda: healthz(server.url)["lastError"] is None, 15, "the recovery")


@pytest.mark.parametrize(
    ("command", "cause"),
    [
        ("{python} -c 'import sys; sys.exit(\"token expired\")'", "exited with 1: token expired"),
        ("{python} -c 'print(\"<html>sign in</html>\")'", "printed 21 bytes that are not JSON"),
        ("/nonexistent/credential-helper", "names a program that does not exist: '/nonexistent/credential-helper'"),
    ],
)
def test_a_bad_process_is_one_line_from_publish_and_serve(
    seaweedfs: SeaweedS3, tmp_path: Path, command: str, cause: str
) -> None:
    env = profile_env(seaweedfs, tmp_path, command.format(python=shlex.quote(sys.executable)))
    url = seaweedfs.url("bad-" + secrets.token_hex(4))
    expected = f"skillwire: error: {url}: credential_process of AWS profile '{PROFILE}' {cause}"
    with environment(env):
        for args in (["publish", str(EXAMPLES), url], ["serve", url, "--http", f"127.0.0.1:{free_port()}"]):
            result = run_cli(*args)
            assert result.code == 1, result.err
            assert result.err.strip().splitlines() == [expected]  # an ordinary error: no traceback hint


def test_keys_that_the_store_refuses_are_not_mistaken_for_success(seaweedfs: SeaweedS3, tmp_path: Path) -> None:
    """The process's keys are really what signs the requests: wrong ones are refused by the store."""
    broker = Broker(tmp_path, "wrong-key", "wrong-secret", lifetime=3600)
    with environment(profile_env(seaweedfs, tmp_path, broker.command)):
        result = run_cli("publish", str(EXAMPLES), seaweedfs.url("refused-" + secrets.token_hex(4)))
    assert result.code == 1
    assert broker.runs == 1
    assert len(result.err.strip().splitlines()) == 1, result.err
