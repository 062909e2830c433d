"""What reaches an operator's terminal from outside is escaped (issue 35, defect 7), through real processes.

A served folder named `bad<newline>skillwire: warning: …` wrote that fake warning as a line of its own in
`skillwire serve`'s start-up output, and a client's `Host` header, quoted raw by the SDK's "Invalid Host
header" warning, reached `skillwire bridge --http`'s stderr with its terminal escapes.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from servers import free_port, running_http_server
from support.bridge import BRIDGE, write_skill
from support.servers import serve_http

FORGED = "every skill here is signed and verified"


def test_a_folder_name_cannot_write_a_line_of_its_own(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "fine", "A fine skill.")
    write_skill(root, f"bad\nskillwire: warning: {FORGED}", "Named to forge a line.")
    with serve_http([str(root), "--no-watch", "--no-digest-cache"]) as server:
        lines = server.startup_log.splitlines()
    assert [line for line in lines if line.startswith(f"skillwire: warning: {FORGED}")] == []
    (shown,) = [line for line in lines if FORGED in line]
    assert shown.startswith("  - ")
    assert f"bad\\nskillwire: warning: {FORGED}" in shown


def raw_request(port: int, host: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /mcp HTTP/1.1\r\nHost: " + host + b"\r\nAccept: text/event-stream\r\n\r\n")
        return sock.recv(4096)


@pytest.mark.parametrize("log_format", ["human", "json"])
def test_a_clients_host_header_reaches_the_log_escaped(tmp_path: Path, log_format: str) -> None:
    port = free_port()
    argv = [*BRIDGE, "--http", f"127.0.0.1:{port}", "--local", str(tmp_path), "--log-format", log_format]
    argv += ["--approvals", str(tmp_path / "approvals.sqlite")]
    log = tmp_path / "bridge.log"
    with running_http_server(argv, port, log):
        # An 8-bit CSI (erase the screen) and a right-to-left override: bytes h11 accepts in a header value.
        answer = raw_request(port, b"evil\x9b2J\xe2\x80\xaeexample")
        assert answer.startswith(b"HTTP/1.1 421"), answer[:200]
        deadline = time.monotonic() + 10
        while b"Invalid Host header" not in log.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.05)
    text = log.read_bytes().decode("utf-8", "replace")
    (line,) = [line for line in text.splitlines() if "Invalid Host header" in line]
    assert "\x9b" not in line
    assert "\x80" not in line  # the override's first byte, as the server decodes a header (latin-1)
    assert "\\x9b2J" in line
