"""A cold `skillwire serve --stdio` answers its handshake before its first scan ends.

Hosts spawn a stdio server and wait for `initialize` (or `server/discover`) under a start-up timeout: the
SDK's discover probe gives up after 10 s and falls back to `initialize`, which a native host takes as "not
2026-07-28". The first scan of thousands of skills took 8.3 s at load 7.6, and the server used to read
nothing before it ended. Now the handshake, and anything else that does not read the catalog, is answered
at once, and every request that reads the catalog waits for the scan.

The proof is an order, not a time: the server's stdout and stderr share one pipe, so the lines arrive in
the order the process wrote them. The start-up summary ("serving N skills") is written when the first scan
has ended; the handshake answers must come before it, the `skills/list` answer after it and complete.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import pytest

from support.skills import write_skill

SKILLS = 3000  # the catalog of the measurement in the closing note (8.3 s to the first answer at load 7.6)
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "cold-start-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
# What a client writes first, per wire: the 2026-07-28 discover, or the 2025-11-25 initialize handshake.
HANDSHAKES: dict[str, list[dict[str, Any]]] = {
    "discover": [{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}],
    "initialize": [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "cold-start-test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ],
}


@pytest.fixture(scope="module")
def large_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cold-start")
    for i in range(SKILLS):
        write_skill(root, f"team-{i % 10}/skill-{i:05d}", {"references/guide.md": f"# Guide {i}\n"})
    return root


def _lines(stream: IO[bytes], into: queue.Queue[str | None]) -> None:
    for raw in stream:
        into.put(raw.decode("utf-8", "replace").rstrip("\n"))
    into.put(None)


def _request(wire: str, request_id: int, method: str) -> dict[str, Any]:
    params: dict[str, Any] = {"_meta": META} if wire == "discover" else {}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


@pytest.mark.parametrize("wire", ["discover", "initialize"])
def test_the_handshake_is_answered_before_the_first_scan_ends(large_catalog: Path, wire: str) -> None:
    command = [sys.executable, "-m", "skillwire", "serve", "--stdio", "--no-digest-cache", "--no-watch"]
    process = subprocess.Popen(
        [*command, "--page-size", str(SKILLS), str(large_catalog)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one pipe: lines arrive in the order the server wrote them
    )
    assert process.stdin is not None
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_lines, args=(process.stdout, lines), daemon=True).start()
    try:
        # All written before the server has even started: the handshake, then a listing (which must wait
        # for the scan), then a tools/list (which must not wait behind it).
        messages = [*HANDSHAKES[wire], _request(wire, 2, "skills/list"), _request(wire, 3, "tools/list")]
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        process.stdin.flush()
        order: list[str] = []
        listing: dict[str, Any] | None = None
        while listing is None:
            line = lines.get(timeout=300)
            assert line is not None, f"the server ended early: {order}"
            if line.startswith("{"):
                message = json.loads(line)
                assert "error" not in message, message
                order.append(f"answer {message['id']}")
                if message["id"] == 2:
                    listing = message["result"]
            elif "serving" in line:
                order.append("scan ended")
        # Not a wall-clock bound: which came first. Before, the summary came first (nothing was read
        # from stdin until the scan ended), then the answers, all after it.
        assert order.index("answer 1") < order.index("scan ended"), order
        assert order.index("answer 3") < order.index("scan ended"), order
        assert order.index("scan ended") < order.index("answer 2"), order
        assert len(listing["skills"]) == SKILLS  # the listing waited for the whole catalog
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 0


@pytest.mark.parametrize("extra", [[], ["--no-watch"]], ids=["watcher-on", "watcher-off"])
def test_an_empty_folder_over_stdio_still_exits_2_with_one_line(tmp_path: Path, extra: list[str]) -> None:
    """The first scan now runs while stdin is answered; "nothing to serve" still ends the server at once
    (the stdin reader thread would otherwise keep it until the client's next line), in one line, exit 2."""
    command = [sys.executable, "-m", "skillwire", "serve", "--stdio", "--no-digest-cache", *extra, str(tmp_path)]
    # stdin stays open and silent, as a host's would: the server must end by itself.
    with subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL) as process:
        assert process.stderr is not None
        try:
            code = process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
        err = process.stderr.read().decode()
    assert code == 2, err
    assert err.strip().splitlines() == [
        f"skillwire: no SKILL.md found under {tmp_path} (--allow-empty serves it anyway)"
    ]
