"""Comments say why; docs say how much (issue 38, item 5). A code comment quoting a measurement (a date that
is not an MCP protocol revision, or a figure with a unit next to a word of measuring: "measured: 12 s -> 7 s",
"took 0.5 s", "cost 20 MB on 10,000 skills") goes stale silently as the code changes; the figure belongs in
docs/measurements.md, with its date and command, and the comment keeps the reason and a pointer.

Read with `tokenize` (comments only: docstrings are documentation). The files still quoting figures are
listed with why they wait; an entry that no longer matches anything fails too, so the list only shrinks.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator

from support.imports import MODULES

# The protocol's revisions are names, not dates of a measurement.
PROTOCOL_REVISIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
FIGURE = re.compile(r"(?<![\w.])~?\d[\d,]*(?:\.\d+)?\s?(?:ns|µs|us|ms|s|KB|kB|MB|GB|KiB|MiB|GiB|x|×|%)(?![\w-])")
MEASURING = re.compile(
    r"\b(?:measured|took|spent|cost|of CPU|faster|slower|(?:at|on|for) [\d,]+ (?:skills|files))\b", re.I
)

# module -> why it still quotes measurements in comments (a file being changed on another branch waits for
# that merge; moving its figures first would only make the merge harder). Empty: every figure has moved.
KNOWN: dict[str, str] = {}


def measurement_comments(source: str) -> Iterator[tuple[int, str]]:
    """(line, comment) for each comment in `source` that quotes a dated or measured figure."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        text = token.string
        dated = any(date not in PROTOCOL_REVISIONS for date in DATE.findall(text))
        if dated or (FIGURE.search(text) and MEASURING.search(text)):
            yield token.start[0], text.strip()


def _found() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for module, path in MODULES.items():
        for line, text in measurement_comments(path.read_text(encoding="utf-8")):
            found.setdefault(module, []).append(f"{path.name}:{line}: {text}")
    return found


def test_no_comment_quotes_a_measurement() -> None:
    found = _found()
    new = [hit for module, hits in found.items() if module not in KNOWN for hit in hits]
    assert new == [], "move the figures to docs/measurements.md; the comment keeps the reason"


def test_every_known_file_still_quotes_one() -> None:
    found = _found()
    assert [module for module in KNOWN if module not in found] == [], "remove the entry: its figures moved"


def test_the_guard_catches_a_planted_copy() -> None:
    planted = (
        "x = 1  # a 2026-11-30 run: 12 s\n"
        "# measured: 12 s -> 7 s for a 100,000-file restart\n"
        "# keeping every entry cost 20 MB on 10,000 skills\n"
        "# a 2026-07-28 client (a protocol revision, not a measurement)\n"
        "# why: a 100 KB URI costs one pass over it, not one per slash\n"
    )
    assert [line for line, _ in measurement_comments(planted)] == [1, 2, 3]
