"""One owner for ranking and for the frontmatter (issues 36 and 38): only `skillwire.search` writes FTS5 or
bm25() SQL, and it finds a SKILL.md's frontmatter only through `core/skill_md.split_skill_md`. Read from the
AST of `src/skillwire`, so a second search engine or a second frontmatter pattern fails here."""

from __future__ import annotations

import ast
import re

from support.imports import MODULES

_SEARCH_SQL = re.compile(r"\busing\s+fts5|\bfts5vocab\b|\bbm25\s*\(|\bMATCH\s+\?", re.IGNORECASE)
# A pattern that finds a frontmatter block itself: a `---` line anchored at the start of a text or a line.
_FRONTMATTER_PATTERN = re.compile(r"(\\A|\^)-{3}")


def strings(tree: ast.AST) -> list[str]:
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def search_sql(source: str) -> list[str]:
    return [text for text in strings(ast.parse(source)) if _SEARCH_SQL.search(text)]


def frontmatter_patterns(source: str) -> list[str]:
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("compile", "match", "search", "sub"):
            found += [text for text in strings(node) if _FRONTMATTER_PATTERN.search(text)]
    return found


def test_the_detectors_find_a_planted_copy() -> None:
    planted = 'db.execute("CREATE VIRTUAL TABLE t USING fts5(name)")\nrows = db.execute("SELECT bm25(t) FROM t")'
    assert len(search_sql(planted)) == 2
    assert frontmatter_patterns('X = re.compile(r"\\A---[ \\t]*\\r?\\n.*?^---", re.M)') != []
    assert search_sql('message = "searching needs FTS5 in this sqlite3"') == []  # prose, not SQL


def test_only_the_search_package_writes_search_sql() -> None:
    found = {
        name: hits
        for name, path in MODULES.items()
        if not name.startswith("skillwire.search") and (hits := search_sql(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_search_package_finds_no_frontmatter_itself() -> None:
    found = {
        name: hits
        for name, path in MODULES.items()
        if name.startswith("skillwire.search") and (hits := frontmatter_patterns(path.read_text(encoding="utf-8")))
    }
    assert found == {}
