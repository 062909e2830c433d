"""Running a bridge benchmark script (`bench/bridge_*_bench.py`) small, as the smoke tests do.

Both scripts take the same flags and write the same report shape (skill count, needle ranks, timings in
seconds), so the run and the checks every such report must pass are written here once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_bridge_bench(
    module: str, skills: int, workdir: Path, timing_keys: tuple[str, ...], timeout: float
) -> tuple[dict[str, Any], str]:
    """`python -m MODULE` on `skills` generated skills: its JSON report and its stdout, once the run exited
    0, counted the skills (the generator adds three needles), ranked every needle first and took between
    0 and 1 s for each of `timing_keys`."""
    out = workdir / "report.json"
    argv = [sys.executable, "-m", module, "--skills", str(skills), "--repeats", "3"]
    argv += ["--workdir", str(workdir / "work"), "--json", str(out)]
    done = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(out.read_text())
    assert report["skills"] == skills + 3
    assert set(report["needle_rank"].values()) == {1}
    for key in timing_keys:
        assert 0 < report[key] < 1.0, key
    return report, done.stdout
