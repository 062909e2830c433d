"""Start `skillwire serve` as a real subprocess on 127.0.0.1 and wait until it listens."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "src" / "skillwire" / "examples" / "skills"
CORPUS = REPO_ROOT.parent / "shared" / "corpora" / "awesome-copilot" / "skills"
# The line `serve` prints once it accepts connections (text or JSON log format), with the port bound.
LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:\d+/mcp)")


@dataclass
class RunningServer:
    url: str
    process: subprocess.Popen[bytes]
    startup_log: str
    log_path: Path | None = None  # the live log, while the server runs

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path is not None else self.startup_log


@contextmanager
def serve_http(
    args: Sequence[str], *, timeout: float = 60.0, env: Mapping[str, str] | None = None
) -> Iterator[RunningServer]:
    """Run `skillwire serve ARGS --http 127.0.0.1:0`; yields once it accepts connections.

    Port 0: the kernel picks the port when the server binds, and its "listening on" line names it (a
    port picked here first could be taken by another test's server before this one binds it).
    """
    log_fd, log_name = tempfile.mkstemp(prefix="skillwire-serve-", suffix=".log")
    os.close(log_fd)
    log_path = Path(log_name)
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "skillwire.cli.main", "serve", *args, "--http", "127.0.0.1:0"],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=None if env is None else {**os.environ, **env},
        )
    try:
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = log_path.read_text(errors="replace")
            if (listening := LISTENING.search(text)) is not None:
                break
            if process.poll() is not None:
                raise RuntimeError(f"skillwire serve exited with {process.returncode}:\n{text}")
            time.sleep(0.05)
        else:
            raise RuntimeError(f"skillwire serve did not start within {timeout}s:\n{text}")
        yield RunningServer(listening.group(1), process, text, log_path)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log_path.unlink(missing_ok=True)
