"""The frontmatter differential against live npm `yaml` (one node process per batch, under the Node 22 of
`scripts/install-tools`): the golden file tests/core/test_frontmatter.py compares every reference case
with is what npm yaml answers today, and the awesome-copilot corpus reads as npm yaml reads it.
Each test skips when the tools (or the corpus) are not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.test_frontmatter import _mismatch
from skillwire.core.skill_md import parse_skill_md, split_skill_md
from support.npm_yaml import Reference, load_golden, missing_reason, reference_parse_many

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "awesome-copilot" / "skills"


def _reference_or_skip(texts: list[str]) -> list[Reference | str]:
    reason = missing_reason()
    if reason is not None:
        pytest.skip(f"npm yaml reference unavailable: {reason}")
    return reference_parse_many(texts)


def test_golden_file_matches_npm_yaml() -> None:
    golden = load_golden()
    texts = list(golden)
    stale = [text for text, live in zip(texts, _reference_or_skip(texts), strict=True) if golden[text] != live]
    assert not stale, f"npm yaml now answers {stale[:3]!r} differently: run scripts/refresh-yaml-reference"


@pytest.mark.corpus
def test_corpus_matches_npm_yaml() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not present at {CORPUS}")
    paths = sorted(CORPUS.rglob("SKILL.md"))
    assert len(paths) > 400
    texts: list[str] = []
    for path in paths:
        frontmatter_text, _, _, _ = split_skill_md(path.read_bytes().decode("utf-8"))
        texts.append(frontmatter_text)
    references = _reference_or_skip(texts)
    problems = [
        f"{path.relative_to(CORPUS)}: {problem}"
        for path, text, reference in zip(paths, texts, references, strict=True)
        if (problem := _mismatch(text, reference)) is not None
    ]
    assert problems == []
    for path in paths:  # and the whole-file entry point agrees with the split + parse above
        document = parse_skill_md(path.read_bytes())
        assert isinstance(document.frontmatter.get("name"), str), path
