"""The PNG chart of a bench.run result: six panels, one group of bars per catalog.

Peers missing from a run (absent from `results["peers"]`) get no bars.

A FastMCP bar that ran out of its time budget is drawn at the budget, hatched, and labelled "≥"; a
measurement that did not happen is named (timed out, skipped, failed, n/a) at the foot of its slot.
The title carries the date and the command that produced the numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes

SW = ("#1f5fa8", "#6fa3dc", "#b9d3ef")
FM = ("#d9731a", "#f2b077")
TS = ("#3a9a4a", "#93d09c")
FLOOR = "#999999"
LOOP = "#555555"

Getter = Callable[[dict[str, Any]], Any]
Series = tuple[str, str, Getter]  # label, colour, value of one catalog


def _peer(peer: str, key: str) -> Getter:
    return lambda catalog: catalog.get("peers", {}).get(peer, {}).get(key)


# Series labels by the peer they belong to, so a run without a peer draws none of its bars.
_LABELS = {"skillwire": "skillwire", "SkillHost": "skillwire", "FastMCP": "fastmcp", "TypeScript": "typescript"}
_LABELS["floor"] = "floor"


def _draw_panel(
    ax: Axes, catalogs: dict[str, Any], title: str, series: list[tuple[str, str, Getter]], log: bool
) -> None:
    names = [name for name, catalog in catalogs.items() if "peers" in catalog]
    width = 0.8 / max(1, len(series))
    ax.set_title(title, fontsize=10)
    numbers: list[float] = []
    for index, (label, color, get) in enumerate(series):
        for position, name in enumerate(names):
            x = position - 0.4 + width * (index + 0.5)
            value = get(catalogs[name])
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                ax.bar(x, value, width, color=color, label=label if position == 0 else None)
                numbers.append(float(value))
            elif isinstance(value, dict) and isinstance(value.get("elapsed_s"), int | float):
                bound = float(value["elapsed_s"])
                ax.bar(
                    x, bound, width, color="white", edgecolor=color, hatch="///", label=label if position == 0 else None
                )
                ax.text(x, bound, "≥", ha="center", va="bottom", fontsize=8, color=color)
                numbers.append(bound)
            else:
                # Not measured: name why (timed out, skipped, failed, n/a) at the foot of the slot.
                kind = str(value.get("status", "n/a")) if isinstance(value, dict) else "n/a"
                ax.bar(x, 0, width, color=color, label=label if position == 0 else None)
                ax.text(
                    x,
                    0.02,
                    kind,
                    transform=ax.get_xaxis_transform(),
                    ha="center",
                    va="bottom",
                    fontsize=7,
                    color=color,
                    rotation=90,
                )
    ax.set_xticks(range(len(names)), names, fontsize=8)
    if log and numbers:
        ax.set_yscale("log")
        ax.set_ylim(min(numbers) / 2, max(numbers) * 12)  # headroom for the legend
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", framealpha=0.85, ncols=2)


def draw(results: dict[str, Any], path: Path) -> None:
    catalogs: dict[str, Any] = results["catalogs"]
    meta = results["meta"]
    ran = set(results.get("peers", ()))

    def _panel(
        ax: Axes, catalogs: dict[str, Any], title: str, series: list[tuple[str, str, Getter]], log: bool
    ) -> None:
        kept = [s for s in series if not any(s[0].startswith(p) for p, peer in _LABELS.items() if peer not in ran)]
        _draw_panel(ax, catalogs, title, kept, log)

    figure, axes = plt.subplots(2, 3, figsize=(16, 9))
    _panel(
        axes[0][0],
        catalogs,
        "start → first skills/list (s)",
        [
            ("skillwire cold", SW[0], _peer("skillwire", "start_first_list_s")),
            ("skillwire restart (snapshot cache)", SW[2], _peer("skillwire", "restart_digest_cache_s")),
            ("FastMCP", FM[0], _peer("fastmcp", "start_first_list_s")),
            ("TypeScript SDK", TS[0], _peer("typescript", "start_first_list_s")),
            ("bare read+hash loop", LOOP, lambda c: c.get("machine", {}).get("read_hash_loop_s")),
        ],
        log=True,
    )
    _panel(
        axes[0][1],
        catalogs,
        "whole skills/list, 100 per page (s)",
        [
            ("skillwire", SW[0], _peer("skillwire", "list_all_s")),
            ("FastMCP", FM[0], _peer("fastmcp", "list_all_s")),
            ("TypeScript SDK", TS[0], _peer("typescript", "list_all_s")),
            ("floor (SDK only)", FLOOR, _peer("floor", "list_all_s")),
        ],
        log=True,
    )
    _panel(
        axes[0][2],
        catalogs,
        "skills/get latency (ms)",
        [
            ("skillwire p50", SW[0], _peer("skillwire", "get_p50_ms")),
            ("skillwire p99", SW[1], _peer("skillwire", "get_p99_ms")),
            ("FastMCP p50", FM[0], _peer("fastmcp", "get_p50_ms")),
            ("FastMCP p99", FM[1], _peer("fastmcp", "get_p99_ms")),
            ("TypeScript SDK p50", TS[0], _peer("typescript", "get_p50_ms")),
            ("TypeScript SDK p99", TS[1], _peer("typescript", "get_p99_ms")),
            ("floor p50", FLOOR, _peer("floor", "get_p50_ms")),
        ],
        log=True,
    )
    _panel(
        axes[1][0],
        catalogs,
        "resources/read throughput (MB/s)",
        [
            ("skillwire < 16 KB", SW[1], _peer("skillwire", "read_small_MBps")),
            ("skillwire ≥ 50 KB", SW[0], _peer("skillwire", "read_large_MBps")),
            ("FastMCP < 16 KB", FM[1], _peer("fastmcp", "read_small_MBps")),
            ("FastMCP ≥ 50 KB", FM[0], _peer("fastmcp", "read_large_MBps")),
            ("TypeScript SDK < 16 KB", TS[1], _peer("typescript", "read_small_MBps")),
            ("TypeScript SDK ≥ 50 KB", TS[0], _peer("typescript", "read_large_MBps")),
        ],
        log=True,
    )
    _panel(
        axes[1][1],
        catalogs,
        "load the largest skill, every file verified (s)",
        [
            ("unverified reads (SDK)", LOOP, _peer("skillwire", "load_unverified_s")),
            ("SkillHost verified", SW[0], _peer("skillwire", "load_verified_s")),
            ("SkillHost first load", SW[1], _peer("skillwire", "load_cold_s")),
            ("SkillHost from cache", SW[2], _peer("skillwire", "load_cached_s")),
            ("FastMCP read_skill", FM[0], _peer("fastmcp", "load_verified_s")),
        ],
        log=True,
    )
    _panel(
        axes[1][2],
        catalogs,
        "server peak RSS (MB)",
        [
            ("skillwire", SW[0], _peer("skillwire", "peak_rss_mb")),
            ("FastMCP", FM[0], _peer("fastmcp", "peak_rss_mb")),
            ("TypeScript SDK", TS[0], _peer("typescript", "peak_rss_mb")),
            ("floor (SDK only)", FLOOR, _peer("floor", "peak_rss_mb")),
        ],
        log=True,
    )
    figure.suptitle(
        f"skillwire {meta['skillwire']} vs FastMCP {meta['fastmcp']}"
        + (f", TypeScript SDK {meta['typescript']}" if meta.get("typescript") and "typescript" in ran else "")
        + " over Streamable HTTP on 127.0.0.1 — "
        f"{meta['date']}\n`{meta['command']}` — {meta['machine']['cpu']}, {meta['machine']['cores']} cores",
        fontsize=11,
    )
    figure.tight_layout(rect=(0, 0, 1, 0.95))
    figure.savefig(path, dpi=110)
    plt.close(figure)
