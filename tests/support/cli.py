"""Running `skillwire` inside the test process: much faster than a new interpreter per call.

stdout and stderr are captured as pipes (not terminals), so commands print their plain, stable form;
COLUMNS and NO_COLOR are taken out of the environment so the host's terminal settings cannot leak in.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from dataclasses import dataclass
from unittest import mock

from skillwire.cli.main import main


@dataclass
class CliResult:
    code: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        return self.out.decode("utf-8")


def run_cli(*args: str, env: dict[str, str] | None = None) -> CliResult:
    """`main([...])` with `env` added to the (cleaned) environment; argparse exits become exit codes."""
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    environ.update(env or {})
    with (
        mock.patch.object(sys, "stdout", stdout),
        mock.patch.object(sys, "stderr", stderr),
        mock.patch.dict(os.environ, environ, clear=True),
    ):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 1
    return CliResult(code, out.getvalue(), err.getvalue().decode("utf-8", errors="replace"))


def run_cli_process(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> CliResult:
    """The CLI as a real process (`python -m skillwire.cli.main`), stdout and stderr pipes and stdin closed,
    for what `run_cli` cannot show: exit paths, signals, a fresh interpreter's imports. The environment is
    cleaned as `run_cli` cleans it, with `env` added."""
    child_env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    child_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "skillwire.cli.main", *args],
        capture_output=True,
        timeout=timeout,
        env=child_env,
        stdin=subprocess.DEVNULL,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", errors="replace"))
