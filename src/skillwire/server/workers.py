"""`skillwire serve --workers N`: N server processes accepting on one listening socket.

The 2026-07-28 protocol is stateless and a catalog snapshot is immutable, so workers share nothing:
each loads its own catalog after the fork and the kernel hands each new connection to one of the
processes waiting in `accept` on the shared socket. Sessions of the legacy 2025-11-25 wire would live
in one worker's memory, and a legacy client's next connection may reach another one ("Session not
found"), so in workers mode `serve` has the SDK serve that wire statelessly (`stateless_http`): every
worker answers every request, and legacy clients get no server-to-client notifications.

The fork happens before anything starts a thread (obstore's runtime, uvicorn, the watcher), because
threads do not survive a fork. The parent only supervises: it forwards SIGTERM (each worker drains,
see `server.app.DrainingServer`, and the parent exits 0) and SIGINT (one line, exit 130), and when a
worker dies on its own it stops the others and exits with that worker's code, so whatever supervises
the parent (systemd, Kubernetes) restarts the whole server instead of it running short of workers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import traceback
from collections.abc import Callable
from types import FrameType

from skillwire.ops.metrics import flush as flush_metrics
from skillwire.ops.metrics import mark_process_dead


def run_workers(count: int, work: Callable[[int], int], *, debug: bool = False) -> int:
    """Fork `count` processes running `work(index)`; wait for all; the first failing worker's exit code."""
    children: dict[int, int] = {}
    for index in range(count):
        pid = os.fork()
        if pid == 0:  # the worker
            # A process group of its own: Ctrl-C at a terminal reaches the parent only, which passes one
            # SIGINT on. Reached twice (the terminal's and the parent's), uvicorn force-quits mid-shutdown
            # and the worker printed some twenty lines of KeyboardInterrupt and CancelledError.
            with contextlib.suppress(OSError):
                os.setpgid(0, 0)
            code = 1
            try:
                code = work(index)
            except KeyboardInterrupt:
                code = 130
            except Exception as exc:
                if debug:
                    traceback.print_exc()
                print(f"skillwire: error in worker {index}: {exc}", file=sys.stderr, flush=True)
            finally:
                # os._exit runs no atexit: the request counts of the last second reach this worker's files here.
                with contextlib.suppress(Exception):
                    flush_metrics()
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        children[pid] = index

    stopping = False
    interrupted = False

    def forward(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping, interrupted
        if signum == signal.SIGINT and not interrupted:
            interrupted = True
            print("skillwire: interrupted; stopping the workers", file=sys.stderr, flush=True)
        stopping = True
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    result = 0
    try:
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            children.pop(pid, None)
            mark_process_dead(pid)  # its live gauges leave the scrape
            code = os.waitstatus_to_exitcode(status)
            if not stopping and code != 0:
                # One worker gone on its own: stop the rest and report it (see the module docstring).
                result = code if code > 0 else 128 - code
                forward(signal.SIGTERM, None)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    # Ctrl-C ends with 130 as every command does; SIGTERM is a requested stop: 0 once all drained.
    return 130 if interrupted and result == 0 else result
