"""Frontmatter decoder benchmark: cost per KB of honest and hostile YAML at growing sizes.

Decoding must be linear in the input (issue 11, item 2: `a:` + 20,000 tabs once took 116 s). For each
input shape this prints the microseconds per KB at every size and the growth ratio, the cost per KB
at the largest size divided by the cost per KB at the smallest: about 1 for linear time, about
(largest / smallest) for quadratic. The size bound `MAX_FRONTMATTER_BYTES` is lifted here so that
the decoder itself is measured past it; the server refuses anything larger before decoding.

    python -m bench.frontmatter_bench [--sizes 4,16,64,256] [--repeat 3] [--json]

Sizes are in KiB. Each figure is the best of `--repeat` runs (the least disturbed by other work).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Callable

from skillwire.core.errors import FrontmatterError
from skillwire.core.yaml import MAX_FRONTMATTER_BYTES, parse_frontmatter


def _honest_flat(n: int) -> str:
    line = "key-{i}: A plain value, as most frontmatter is: {i}\n"
    return "name: pdf\ndescription: Extract text from PDF files.\n" + "".join(
        line.format(i=i) for i in range(max(1, n // len(line)))
    )


def _honest_nested(n: int) -> str:
    block = (
        "skill-{i}:\n  description: >-\n    Extract text and tables from PDF files,\n    fill forms, merge pages.\n"
        '  metadata: {{version: "1.{i}", tags: [pdf, docs]}}\n  allowed-tools: [Read, "Bash(git:*)"]\n'
    )
    return "".join(block.format(i=i) for i in range(max(1, n // len(block))))


#: Input shapes: name -> (is it hostile, a function from a size in bytes to about that much YAML).
SHAPES: dict[str, tuple[bool, Callable[[int], str]]] = {
    "honest flat (fast path)": (False, _honest_flat),
    "honest nested": (False, _honest_nested),
    "tabs after a key": (True, lambda n: "a:" + "\t" * n),
    "tabs then a value": (True, lambda n: "a:" + "\t" * n + "x"),
    "tab-indented blank lines": (True, lambda n: "a:\n" + "\t\n" * (n // 2) + "b: c"),
    "spaces after a key": (True, lambda n: "a:" + " " * n),
    "long double-quoted": (True, lambda n: 'a: "' + "x" * n + '"'),
    "many escapes": (True, lambda n: 'a: "' + "\\t" * (n // 2) + '"'),
    "long plain scalar with spaces": (True, lambda n: "a: " + "x " * (n // 2)),
    "folded lines": (True, lambda n: "a: >\n" + "  word\n" * (n // 7)),
    "flow sequence of numbers": (True, lambda n: "a: [" + "1," * (n // 2) + "]"),
    "comment run": (True, lambda n: "a: b\n" + "# c\n" * (n // 4)),
    "blank lines in a quoted scalar": (True, lambda n: 'a: "x' + "\n" * n + '"'),
    "nested flow mappings": (True, lambda n: "a: " + "{b: " * 150 + "c" + "}" * 150 + "\n" + "d: e\n" * (n // 5)),
    "unclosed flow sequences": (True, lambda n: "a: " + "[" * n),
    "unclosed mixed flow nesting": (True, lambda n: "a: " + "[{a: " * (n // 5)),
}


def decode_seconds(text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        with contextlib.suppress(FrontmatterError):
            parse_frontmatter(text, max_bytes=None)
        best = min(best, time.perf_counter() - started)
    return best


def run(sizes_kib: list[int], repeat: int) -> dict[str, dict[str, object]]:
    results: dict[str, dict[str, object]] = {}
    for name, (hostile, make) in SHAPES.items():
        per_kb: dict[int, float] = {}
        for kib in sizes_kib:
            text = make(kib * 1024)
            size_kb = len(text.encode("utf-8")) / 1024
            per_kb[kib] = decode_seconds(text, repeat) * 1e6 / size_kb
        first, last = per_kb[sizes_kib[0]], per_kb[sizes_kib[-1]]
        results[name] = {
            "hostile": hostile,
            "us_per_kb": per_kb,
            "growth_ratio": last / first if first > 0 else float("nan"),
        }
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,16,64,256", help="comma-separated sizes in KiB (default 4,16,64,256)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    sizes = sorted(int(part) for part in args.sizes.split(","))
    results = run(sizes, args.repeat)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"frontmatter decoder, µs per KB (best of {args.repeat}); serve refuses over {MAX_FRONTMATTER_BYTES:,} B")
    header = f"{'input':34}" + "".join(f"{str(k) + ' KiB':>11}" for k in sizes) + f"{'growth':>9}"
    print(header)
    for name, row in results.items():
        per_kb = row["us_per_kb"]
        assert isinstance(per_kb, dict)
        cells = "".join(f"{per_kb[k]:11.1f}" for k in sizes)
        print(f"{name:34}{cells}{row['growth_ratio']:9.2f}")
    last, first = sizes[-1], sizes[0]
    print(f"growth = µs/KB at {last} KiB ÷ µs/KB at {first} KiB: ~1 is linear, ~{last // first} quadratic")


if __name__ == "__main__":
    main()
