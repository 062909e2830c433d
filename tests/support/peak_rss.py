"""Peak resident memory of a command and everything it waits for, measured from a small launcher.

`os.wait4` on a child of the test process is wrong here: Linux carries the parent's high-water RSS
into a forked child across `exec`, so after twenty minutes of tests a child of pytest "peaks" at
pytest's own size (511 MB in CI for a command that peaks at 105 MB). A fresh interpreter of about
10 MB starts the command instead and reports `RUSAGE_CHILDREN`, the largest of its waited-for tree.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

_LAUNCHER = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": done.returncode, "maxrss_kib": usage.ru_maxrss}))
"""


@dataclass(frozen=True)
class Measured:
    code: int
    peak_rss_mib: float
    err: str


def run_measured(argv: list[str], timeout: float) -> Measured:
    """Runs `argv` (stdout discarded, stderr kept) and returns its exit code and peak RSS in MiB."""
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=True,
    )
    report = json.loads(done.stdout)
    return Measured(report["code"], report["maxrss_kib"] / 1024, done.stderr.decode())
