"""The memory one HTTP session costs `skillwire bridge --http` (issue 35, defect 2).

    .venv/bin/python -m bench.bridge_sessions_bench [--sessions 1000] [--load]

Starts a bridge over one local folder of one small skill on a free 127.0.0.1 port, reads its resident set
(`VmRSS`), opens `--sessions` 2025-11-25 sessions from one client (initialize, initialized, one tool call that
makes the bridge pick the session's conversation: `read_resource` of an unknown label, or with `--load` a
`read_skill` of the local skill, so each conversation also holds one loaded skill), reads `VmRSS` again and
prints the difference per session. The sessions stay open while it is read (the SDK keeps each until its idle
timeout). Past the bridge's cap (`bridge/sessions.py` `MAX_SESSIONS`) sessions are refused; the count says so.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

LEGACY = "2025-11-25"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def _post(url: str, message: dict[str, object], session: str | None) -> tuple[int, str | None]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": LEGACY,
    }
    if session is not None:
        headers["Mcp-Session-Id"] = session
    request = urllib.request.Request(url, json.dumps(message).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
            return response.status, response.headers.get("mcp-session-id")
    except urllib.error.HTTPError as exc:
        exc.read()
        return exc.code, None


def open_session(url: str, call: dict[str, object]) -> bool:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
    }
    status, session = _post(url, init, None)
    if status != 200 or session is None:
        return False
    _post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    status, _ = _post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}, session)
    return status == 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--load", action="store_true", help="each session loads the local skill")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        skill = Path(work, "skills", "notes")
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: notes\ndescription: Notes.\n---\nRead notes.md.\n" + "x" * 2000)
        (skill / "notes.md").write_text("notes\n")
        port = _free_port()
        argv = [sys.executable, "-m", "skillwire.cli.main", "bridge", "--http", f"127.0.0.1:{port}"]
        argv += ["--local", str(skill.parent), "--approvals", str(Path(work, "approvals.sqlite"))]
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            deadline = time.monotonic() + 60
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            call: dict[str, object] = (
                {"name": "read_skill", "arguments": {"server": "local", "uri": "notes"}}
                if args.load
                else {"name": "read_resource", "arguments": {"server": "nowhere", "uri": "x.md"}}
            )
            open_session(url, call)  # one first, so the code paths and caches it touches are warm
            before = _rss_kib(process.pid)
            opened = sum(open_session(url, call) for _ in range(args.sessions))
            time.sleep(1)
            after = _rss_kib(process.pid)
            per = (after - before) / max(opened, 1)
            loaded = ", each with the skill loaded" if args.load else ""
            rss = f"RSS {before} -> {after} KiB, {per:.1f} KiB each"
            print(f"{opened} of {args.sessions} sessions opened{loaded}: {rss}")
        finally:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
