"""`skillwire serve` as people run it: what it refuses before serving, a port in use, and Ctrl-C.

Every case runs `skillwire serve` as a real subprocess with a timeout, so a server that wrongly keeps
running fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from servers import free_port
from support.cli import run_cli
from support.servers import EXAMPLES

SERVE = [sys.executable, "-m", "skillwire", "serve", "--no-digest-cache"]


def serve_exits(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """Run `skillwire serve ARGS` expecting it to exit by itself (a running server is a timeout)."""
    return subprocess.run([*SERVE, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        pytest.param(lambda tmp: tmp / "missing", "no such folder: {path}", id="missing"),
        pytest.param(lambda tmp: _file(tmp / "SKILL.md"), "not a folder: {path}", id="a-file"),
        pytest.param(lambda tmp: _folder(tmp / "empty"), "no SKILL.md found under {path}", id="empty-folder"),
        pytest.param(
            lambda tmp: _folder(tmp / "no-skills", {"README.md": "hi", "docs/guide.md": "x"}),
            "no SKILL.md found under {path}",
            id="folder-without-skills",
        ),
    ],
)
def test_serve_with_nothing_to_serve_exits_2_with_one_line(tmp_path: Path, make: object, expected: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    result = serve_exits(str(path), "--http", f"127.0.0.1:{free_port()}")
    assert result.returncode == 2, result.stderr
    assert one_line(result.stderr).startswith("skillwire: " + expected.format(path=path))


def test_serve_of_only_broken_skills_exits_2_and_gives_the_reasons(tmp_path: Path) -> None:
    root = _folder(tmp_path / "skills", {"Bad_Name/SKILL.md": "---\nname: Bad_Name\ndescription: x\n---\n"})
    result = serve_exits(str(root), "--http", f"127.0.0.1:{free_port()}")
    assert result.returncode == 2, result.stderr
    assert "Bad_Name" in result.stderr  # the skip reason
    assert result.stderr.strip().splitlines()[-1].startswith("skillwire: nothing to serve")


def test_one_empty_folder_among_good_ones_is_named(tmp_path: Path) -> None:
    empty = _folder(tmp_path / "typo")
    result = serve_exits(str(EXAMPLES), str(empty), "--http", f"127.0.0.1:{free_port()}")
    assert result.returncode == 2
    assert one_line(result.stderr) == f"skillwire: no SKILL.md found under {empty} (--allow-empty serves it anyway)"


def test_allow_empty_serves_an_empty_folder(tmp_path: Path) -> None:
    empty = _folder(tmp_path / "empty")
    port = free_port()
    process = subprocess.Popen(
        [*SERVE, str(empty), "--allow-empty", "--no-watch", "--http", f"127.0.0.1:{port}"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stderr is not None
        assert "serving 0 skills" in process.stderr.readline()
        assert "listening on" in process.stderr.readline()
        listed = run_cli("ls", "--json", f"http://127.0.0.1:{port}/mcp")
        assert listed.code == 0, listed.err
        assert json.loads(listed.out)["skills"] == []
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)


def test_port_0_announces_and_serves_on_the_port_the_kernel_picked() -> None:
    # Port 0 is how a script or a test avoids a port race (pick a free port, then another process binds
    # it first): the "listening on" line must name the port bound, not 0, and answer there.
    process = subprocess.Popen(
        [*SERVE, str(EXAMPLES), "--no-watch", "--http", "127.0.0.1:0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stderr is not None
        while "listening on" not in (line := process.stderr.readline()):
            assert line, "skillwire serve exited before listening"
        url = line.strip().rsplit(" ", 1)[-1]
        port = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/mcp", url)
        assert port is not None, line
        assert int(port.group(1)) > 0, line
        listed = run_cli("ls", "--json", url)
        assert listed.code == 0, listed.err
        assert len(json.loads(listed.out)["skills"]) > 0
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)


@pytest.mark.parametrize(
    ("http", "message"),
    [
        ("8765", "skillwire: --http wants HOST:PORT, got '8765'; for port 8765 write --http 127.0.0.1:8765"),
        ("127.0.0.1:http", "skillwire: --http wants HOST:PORT, got '127.0.0.1:http'"),
        ("127.0.0.1:70000", "skillwire: --http: port 70000 is out of range (0-65535)"),
    ],
)
def test_http_usage_error_is_found_before_scanning(http: str, message: str) -> None:
    result = serve_exits(str(EXAMPLES), "--http", http)
    assert result.returncode == 2
    assert one_line(result.stderr) == message  # no "serving 5 skills" first: nothing was scanned


def test_port_in_use_is_one_line_naming_the_port_and_how_to_pick_another() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve_exits(str(EXAMPLES), "--http", f"127.0.0.1:{port}")
    assert result.returncode == 1
    assert one_line(result.stderr) == (
        f"skillwire: port {port} is already in use on 127.0.0.1; pick another with --http 127.0.0.1:PORT"
    )


def seconds_to_exit_after_ctrl_c(process: subprocess.Popen[bytes], ready: Callable[[], None], settle: float) -> float:
    """Once `ready()` returns and `settle` seconds more have passed, Ctrl-C: how long the process then took
    to exit. A process still running when this ends (ready failed, or no exit within 10 s) is killed."""
    try:
        ready()
        time.sleep(settle)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)
        return time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("watch", [True, False], ids=["watcher-on", "watcher-off"])
def test_ctrl_c_stops_serve_within_a_second(watch: bool) -> None:
    port = free_port()
    argv = [*SERVE, str(EXAMPLES), "--http", f"127.0.0.1:{port}", *([] if watch else ["--no-watch"])]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

    def listening() -> None:
        assert process.stderr is not None
        while b"listening on" not in (line := process.stderr.readline()):
            assert line, "skillwire serve exited before listening"

    elapsed = seconds_to_exit_after_ctrl_c(process, listening, settle=0.3)  # the watcher is then in its wait
    assert process.stderr is not None
    assert elapsed < 1.0, f"serve took {elapsed:.2f} s to exit after Ctrl-C"
    assert process.returncode == 130
    assert b"Traceback" not in process.stderr.read()
    with socket.socket() as probe:  # and the port is free again
        probe.bind(("127.0.0.1", port))


@pytest.mark.parametrize("watch", [True, False], ids=["watcher-on", "watcher-off"])
def test_ctrl_c_stops_a_stdio_server_within_a_second(watch: bool) -> None:
    """The SDK reads stdin in a thread cancellation cannot stop; without care Ctrl-C waited for the
    client's next line, forever at a terminal."""
    argv = [*SERVE, str(EXAMPLES), "--stdio", *([] if watch else ["--no-watch"])]
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def serving() -> None:
        assert process.stderr is not None
        assert b"serving 5 skills" in process.stderr.readline()

    elapsed = seconds_to_exit_after_ctrl_c(process, serving, settle=0.5)  # the SDK is then reading stdin
    assert elapsed < 1.0, f"serve --stdio took {elapsed:.2f} s to exit after Ctrl-C"
    assert process.returncode == 130


def test_python_dash_m_skillwire_is_the_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "skillwire", "--version"], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("skillwire ")


def _file(path: Path) -> Path:
    path.write_text("---\nname: x\ndescription: x\n---\n")
    return path


def _folder(path: Path, files: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True)
    for name, text in (files or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return path
