"""Start `skillwire serve` as a real subprocess on 127.0.0.1 and wait until it listens."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from servers import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "src" / "skillwire" / "examples" / "skills"
CORPUS = REPO_ROOT.parent / "shared" / "corpora" / "awesome-copilot" / "skills"


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
    """Run `skillwire serve ARGS --http 127.0.0.1:<free port>`; yields once it accepts connections."""
    port = free_port()
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"skillwire-serve-{port}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "skillwire.cli.main", "serve", *args, "--http", f"127.0.0.1:{port}"],
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
            if "listening on" in text:
                break
            if process.poll() is not None:
                raise RuntimeError(f"skillwire serve exited with {process.returncode}:\n{text}")
            time.sleep(0.05)
        else:
            raise RuntimeError(f"skillwire serve did not start within {timeout}s:\n{text}")
        yield RunningServer(f"http://127.0.0.1:{port}/mcp", process, text, log_path)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log_path.unlink(missing_ok=True)
