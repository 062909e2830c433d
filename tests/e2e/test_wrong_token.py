"""A wrong bearer token is said to be refused; no token at all is said to be missing (issue 23, item 5).

A real `skillwire serve --tokens FILE` over HTTP on 127.0.0.1. The server answers both with the same
HTTP 401 (the `mcp` SDK's bearer auth tells a client nothing more, rightly), so the client words it from
what it sent: `skillwire ls` and `skillwire bridge --check` each print one line, and neither ever prints the
token it sent.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.bridge import SKILLWIRE
from support.cli import run_cli
from support.servers import EXAMPLES, RunningServer, serve_http

GOOD = "good-token-7c1f9e"
WRONG = "wrong-token-0d3a58"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.json"
    tokens.write_text(json.dumps({"tokens": [{"client": "ci", "token": GOOD, "audiences": []}]}))
    with serve_http([str(EXAMPLES), "--tokens", str(tokens), "--no-watch", "--no-digest-cache"]) as running:
        yield running


def test_ls_with_a_wrong_token_says_the_token_was_refused(guarded: RunningServer) -> None:
    wrong = run_cli("ls", "--header", f"Authorization: Bearer {WRONG}", guarded.url)
    assert wrong.code == 1
    assert wrong.out == b""
    (line,) = wrong.err.splitlines()
    assert line == (
        f"skillwire: error: {guarded.url} refused the bearer token (HTTP 401); "
        "check that the token is the right one for this server and still valid"
    )
    assert WRONG not in wrong.err
    assert "needs a header" not in wrong.err

    missing = run_cli("ls", guarded.url)
    assert missing.code == 1
    (line,) = missing.err.splitlines()
    assert "refused the request (HTTP 401); an authenticated server needs a header" in line

    right = run_cli("ls", "--header", f"Authorization: Bearer {GOOD}", guarded.url)
    assert right.code == 0, right.err


def test_the_bridge_says_an_upstream_refused_its_token(guarded: RunningServer, tmp_path: Path) -> None:
    approvals = ["--approvals", str(tmp_path / "approvals.sqlite"), "--upstream-timeout", "15"]
    done = subprocess.run(
        [
            *SKILLWIRE,
            "bridge",
            "--server",
            f"work={guarded.url}",
            "--header",
            f"work:Authorization: Bearer {WRONG}",
            *approvals,
            "--check",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if "work" in line]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"skillwire bridge: upstream 'work' ({guarded.url}) is unavailable: "), lines
    assert f"{guarded.url} refused the bearer token (HTTP 401)" in lines[0], lines
    assert WRONG not in done.stderr + done.stdout
