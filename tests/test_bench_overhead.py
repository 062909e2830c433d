"""bench.run's metrics-and-logging overhead: each figure comes with the spread of its blocks of rounds."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.measure import interleave  # bench/ is not an installed package: from the checkout
from bench.run import observability_overhead


def test_overhead_states_the_range_of_block_by_block_ratios() -> None:
    peers: dict[str, dict[str, Any]] = {
        "obs-off": {"get_p50_ms": 2.0, "list_all_s": 0.2},
        "obs-metrics": {"get_p50_ms": 2.02, "list_all_s": 0.2},
    }
    extras = {
        "obs-off": {"server_cpu_ms": {"get": 2.0, "list": 200.0}, "server_cpu_ms_blocks": {"get": [2.0, 2.0, 2.0]}},
        "obs-metrics": {
            "server_cpu_ms": {"get": 2.02, "list": 204.0},
            "server_cpu_ms_blocks": {"get": [1.98, 2.02, 2.1]},
        },
    }
    row = observability_overhead(peers, extras)["obs-metrics"]
    assert row["get_cpu_pct"] == pytest.approx(1.0)
    assert row["list_cpu_pct"] == pytest.approx(2.0)
    assert row["get_cpu_pct_min"] == pytest.approx(-1.0)
    assert row["get_cpu_pct_max"] == pytest.approx(5.0)
    assert "list_cpu_pct_min" not in row  # one block (or none) is no spread


def test_interleave_reads_the_cpu_after_each_block() -> None:
    async def run() -> Any:
        done: list[int] = []

        async def one(peer: str, client: Any, index: int) -> None:
            done.append(index)

        return await interleave({"me": None}, {"me": os.getpid()}, 10, 30.0, one, blocks=5), done  # type: ignore[dict-item]

    try:
        measured, done = anyio.run(run)
    finally:
        gc.unfreeze()  # interleave freezes what exists, as a bench does; this process runs other tests
    assert done == list(range(10))
    # This process's own CPU over two requests each: a number per block (the tick may make some zero).
    assert len(measured.cpu_ms_blocks["me"]) == 5
