"""A command that used object storage exits with its own code, never with obstore's abort.

obstore's Rust runtime keeps worker threads that `Py_Finalize` does not stop; when one wakes during the
teardown the process aborts (SIGABRT, exit status 134) after the command has succeeded. Here a two-line
put/get script aborted in 7 of 48 runs, so 24 publishes (8 at a time, which makes the race likelier) all
exit 0 only when `skillwire` skips the teardown (`cli/main.py::entry`).
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from support.servers import EXAMPLES

RUNS = 24


def test_publish_to_a_file_store_exits_zero_every_time(tmp_path: Path) -> None:
    def publish(run: int) -> tuple[int, str]:
        target = f"file://{tmp_path / f'store-{run}'}"
        done = subprocess.run(
            [sys.executable, "-m", "skillwire.cli.main", "publish", str(EXAMPLES), target],
            capture_output=True,
            text=True,
            timeout=120,
        )
        return done.returncode, done.stderr

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(publish, range(RUNS)))
    failed = [(code, err[-300:]) for code, err in results if code != 0]
    assert not failed, f"{len(failed)} of {RUNS} publishes failed: {failed[0]}"
    assert all(err.startswith("skillwire: published 5 skills") for _, err in results), results[0][1]
