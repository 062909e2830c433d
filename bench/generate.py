"""Generated skill catalogs for benchmarks: N skills × M files with a realistic size spread.

Deterministic (seeded), so two runs measure the same bytes. Most files are a few KB of Markdown or
Python; with `large=True` about 2% are 50–500 KB and 1% are binary. Files get an mtime in the past so
the digest cache treats them as settled (see catalog.digests).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

_WORDS = [
    "skill",
    "agent",
    "file",
    "manifest",
    "digest",
    "verify",
    "server",
    "host",
    "cache",
    "approve",
    "review",
    "refund",
    "invoice",
    "template",
    "policy",
    "request",
    "customer",
    "billing",
    "process",
    "extract",
    "table",
    "form",
    "field",
    "check",
]


def _text(rng: random.Random, size: int) -> bytes:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words).encode()[:size]


def generate_catalog(root: Path, skills: int, files_per_skill: int = 10, *, large: bool = False, seed: int = 7) -> Path:
    """Write the catalog under `root` (reused when a marker says it is complete) and return it."""
    marker = root / f".complete-{skills}x{files_per_skill}-{int(large)}-{seed}"
    if marker.exists():
        return root
    rng = random.Random(seed)
    past = 1_600_000_000
    for index in range(skills):
        group = f"team{index % 50:02d}"
        name = f"skill-{index:05d}"
        folder = root / group / name
        (folder / "references").mkdir(parents=True, exist_ok=True)
        (folder / "scripts").mkdir(exist_ok=True)
        skill_md = (
            f"---\nname: {name}\ndescription: Generated benchmark skill number {index} for {group}; "
            f"use it when measuring.\nmetadata:\n  group: {group}\n---\n\n# {name}\n\n"
        ).encode() + _text(rng, rng.randint(800, 4000))
        (folder / "SKILL.md").write_bytes(skill_md)
        for n in range(files_per_skill - 1):
            roll = rng.random()
            if large and roll < 0.01:
                path, data = folder / "scripts" / f"blob{n}.bin", rng.randbytes(rng.randint(2_000, 60_000))
            elif large and roll < 0.03:
                path, data = folder / "references" / f"big{n}.md", _text(rng, rng.randint(50_000, 500_000))
            elif n % 3 == 0:
                path, data = folder / "scripts" / f"tool{n}.py", _text(rng, rng.randint(500, 6000))
            else:
                path, data = folder / "references" / f"ref{n}.md", _text(rng, rng.randint(500, 6000))
            path.write_bytes(data)
        for path in folder.rglob("*"):
            os.utime(path, (past, past))
    marker.touch()
    return root
