"""What a command prints, and where: results on stdout, diagnostics on stderr, one rule for people.

Colour, tables and progress bars only on a terminal; plain, stable text when piped; `--json` for
machines; `--quiet` for nothing but errors. Server-supplied text passes through `printable` before
it reaches a terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from skillwire.core.display import escape


class Output:
    """stdout for results, stderr for diagnostics; rich features only on a real terminal."""

    def __init__(
        self,
        *,
        quiet: bool = False,
        json_mode: bool = False,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
    ) -> None:
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.quiet = quiet
        self.json_mode = json_mode
        self.is_terminal = self.stdout.isatty() and os.environ.get("TERM") != "dumb"
        no_color = "NO_COLOR" in os.environ
        self.console = Console(
            file=self.stdout,
            force_terminal=self.is_terminal,
            no_color=no_color or not self.is_terminal,
            highlight=False,
            soft_wrap=not self.is_terminal,
        )
        self.err_console = Console(
            file=self.stderr,
            force_terminal=self.stderr.isatty(),
            no_color=no_color or not self.stderr.isatty(),
            highlight=False,
            soft_wrap=True,  # a diagnostic stays one line; the terminal wraps it, rich does not break it
        )

    @property
    def width(self) -> int:
        return self.console.width if self.is_terminal else 100

    def print(self, text: str = "", **kwargs: Any) -> None:
        if not self.quiet:
            self.console.print(text, markup=False, **kwargs) if not kwargs.get("markup") else self.console.print(
                text, **kwargs
            )

    def write(self, text: str) -> None:
        """Raw text on stdout, exactly as given (for `--json` and piped output)."""
        self.stdout.write(text)
        self.stdout.flush()

    def warn(self, text: str) -> None:
        if not self.quiet:
            self.err_console.print(text, markup=False, style="yellow")

    def error(self, text: str) -> None:
        self.err_console.print(text, markup=False, style="bold red")

    def progress(self, description: str, total: int | None) -> Progress | None:
        """A progress bar on a terminal (stderr), None when piped, quiet or JSON."""
        if self.quiet or self.json_mode or not self.err_console.is_terminal:
            return None
        progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.err_console,
            transient=True,
        )
        progress.add_task(description, total=total)
        return progress


# Server-supplied text longer than this is cut where it is printed: a 10 MB description is shown as 2,000
# characters and a count. (Agent Skills caps a description at 1,024 characters, so real ones print whole.)
PRINT_LIMIT = 2000


def printable(text: str, limit: int = PRINT_LIMIT) -> str:
    """Server-supplied text made safe for a terminal (`core/display.escape`, the one rule): control, bidi,
    zero-width and line-separator characters become visible escapes, and anything past `limit` characters
    is cut, with a note saying how much."""
    return escape(text, limit)


def report_failure(out: Output, args: argparse.Namespace, exc: Exception, hint: str = "") -> int:
    """The one-line error every client command prints (the traceback only with --debug); returns 1."""
    if getattr(args, "debug", False):
        raise exc
    out.error(f"skillwire: error: {printable(str(exc))}{hint}")
    return 1
