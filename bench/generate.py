"""Generated skill catalogs for benchmarks: N skills × M files with a realistic size spread.

Deterministic (seeded), so two runs measure the same bytes. Most files are a few KB of Markdown or
Python; with `large=True` about 2% are 50–500 KB and 1% are binary. Files get an mtime in the past so
the digest cache treats them as settled (see catalog.digests). `generate_limits_skill` writes one skill
exactly at the SEP's limits (512 files, 16 MiB), and `catalog_stats` describes any catalog on disk.
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


_POOL: bytes | None = None


def _bulk_text(rng: random.Random, size: int) -> bytes:
    """Word text like `_text`, fast enough for files of hundreds of KB: slices of a fixed word pool."""
    global _POOL
    if _POOL is None:
        _POOL = _text(random.Random(0), 1 << 17)
    pieces: list[bytes] = []
    length = 0
    while length < size:
        start = rng.randrange(len(_POOL) - 8192)
        piece = _POOL[start : start + rng.randint(2048, 8192)]
        pieces.append(piece)
        length += len(piece)
    return b"".join(pieces)[:size]


def generate_catalog(root: Path, skills: int, files_per_skill: int = 10, *, large: bool = False, seed: int = 7) -> Path:
    """Write the catalog under `root` (reused when a marker says it is complete) and return it."""
    marker = root / f".complete-{skills}x{files_per_skill}-{int(large)}-{seed}"
    if marker.exists():
        return root
    rng = random.Random(seed)
    past = 1_600_000_000
    # The original word generator for small catalogs (their bytes stay what they were); the fast one for
    # large=True, whose 10,000-skill catalog is about 900 MB.
    text = _bulk_text if large else _text
    for index in range(skills):
        group = f"team{index % 50:02d}"
        name = f"skill-{index:05d}"
        folder = root / group / name
        (folder / "references").mkdir(parents=True, exist_ok=True)
        (folder / "scripts").mkdir(exist_ok=True)
        skill_md = (
            f"---\nname: {name}\ndescription: Generated benchmark skill number {index} for {group}; "
            f"use it when measuring.\nmetadata:\n  group: {group}\n---\n\n# {name}\n\n"
        ).encode() + text(rng, rng.randint(800, 4000))
        (folder / "SKILL.md").write_bytes(skill_md)
        for n in range(files_per_skill - 1):
            roll = rng.random()
            if large and roll < 0.01:
                path, data = folder / "scripts" / f"blob{n}.bin", rng.randbytes(rng.randint(2_000, 60_000))
            elif large and roll < 0.03:
                path, data = folder / "references" / f"big{n}.md", _bulk_text(rng, rng.randint(50_000, 500_000))
            elif n % 3 == 0:
                path, data = folder / "scripts" / f"tool{n}.py", text(rng, rng.randint(500, 6000))
            else:
                path, data = folder / "references" / f"ref{n}.md", text(rng, rng.randint(500, 6000))
            path.write_bytes(data)
        for path in folder.rglob("*"):
            os.utime(path, (past, past))
    marker.touch()
    return root


def generate_refs_catalog(root: Path, skills: int, *, seed: int = 13) -> Path:
    """The second shape (issue 25): per skill a SKILL.md with `license` and `metadata`, and eight files of
    1-8 KB in `references/` and `scripts/`, as skills written for agents usually are (no large or binary
    files). Reused when a marker says it is complete."""
    marker = root / f".complete-refs-{skills}-{seed}"
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
            f"---\nname: {name}\ndescription: Reference skill number {index} for {group}; use it when the "
            f"task needs {group}'s conventions.\nlicense: Apache-2.0\nmetadata:\n  author: {group}\n"
            f'  version: "1.{index % 7}.0"\n---\n\n# {name}\n\n'
        ).encode() + _bulk_text(rng, rng.randint(1_000, 4_000))
        (folder / "SKILL.md").write_bytes(skill_md)
        for n in range(8):
            path = folder / "scripts" / f"step{n}.py" if n % 2 else folder / "references" / f"guide{n}.md"
            path.write_bytes(_bulk_text(rng, rng.randint(1_000, 8_000)))
        for path in folder.rglob("*"):
            os.utime(path, (past, past))
    marker.touch()
    return root


LIMIT_FILES = 512
LIMIT_BYTES = 16 * 1024 * 1024


def generate_limits_skill(root: Path, *, seed: int = 11) -> Path:
    """One skill exactly at the limits: 512 files (SKILL.md included) totalling exactly 16 MiB.

    Mostly text of 1–40 KB in nested folders, plus a few binaries of about 1 MiB that take up the rest.
    """
    marker = root / f".complete-limits-{seed}"
    if marker.exists():
        return root
    rng = random.Random(seed)
    past = 1_600_000_000
    folder = root / "limits" / "at-the-limits"
    skill_md = (
        b"---\nname: at-the-limits\ndescription: A skill of exactly 512 files and 16 MiB, the largest the "
        b"skills extension allows; use it when measuring.\n---\n\n# At the limits\n\n"
    ) + _text(rng, 2000)
    binaries = 8
    texts = LIMIT_FILES - 1 - binaries
    files: list[tuple[str, bytes]] = []
    for n in range(texts):
        sub = ("references", "scripts", "assets/templates", "references/deep/er")[n % 4]
        suffix = ".py" if sub == "scripts" else ".md"
        files.append((f"{sub}/file{n:03d}{suffix}", _bulk_text(rng, rng.randint(1_000, 40_000))))
    remaining = LIMIT_BYTES - len(skill_md) - sum(len(data) for _, data in files)
    if remaining < binaries:
        raise AssertionError("the text files of the limits skill leave no room for its binaries")
    for n in range(binaries):
        size = remaining // binaries + (remaining % binaries if n == binaries - 1 else 0)
        files.append((f"assets/blob{n}.bin", rng.randbytes(size)))
    (folder).mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_bytes(skill_md)
    for relative, data in files:
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for path in folder.rglob("*"):
        os.utime(path, (past, past))
    marker.touch()
    return root


def catalog_files(root: Path) -> list[Path]:
    """Every regular file of a catalog (what a server would hash), in a stable order; markers excluded."""
    out: list[Path] = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if directory == str(root) and name.startswith(".complete-"):
                continue
            path = Path(directory) / name
            if path.is_file() and not path.is_symlink():
                out.append(path)
    return out


def catalog_stats(root: Path) -> dict[str, int]:
    """Skills (SKILL.md files), files, bytes, files of 50 KB or more, and binary (non-UTF-8) files."""
    skills = files = total = large = binary = 0
    for path in catalog_files(root):
        data = path.read_bytes()
        files += 1
        total += len(data)
        skills += path.name == "SKILL.md"
        large += len(data) >= 50_000
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            binary += 1
    return {"skills": skills, "files": files, "bytes": total, "large_files": large, "binary_files": binary}
