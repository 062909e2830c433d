"""Skill folders written for tests: one SKILL.md text, one file writer and one folder writer.

Every test that needs a skill on disk builds it here, so a change to what a minimal valid skill is (or to
how a test tree is written) is made once. A test that needs a malformed SKILL.md writes that file itself,
with `write_file`, where the test reads what it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

DESCRIPTION = "A skill for tests."


def skill_md(name: str, description: str = DESCRIPTION, extra: str = "", body: str | None = None) -> str:
    """A SKILL.md: frontmatter with `name`, `description` and `extra` (YAML lines, each ending in a newline),
    then `body` (default: a `# name` heading)."""
    text = f"# {name}\n" if body is None else body
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{text}"


def write_file(path: Path, content: str | bytes) -> Path:
    """`content` at `path` (text as UTF-8), its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def write_skill(
    root: Path,
    rel: str,
    files: Mapping[str, str | bytes] | None = None,
    *,
    name: str | None = None,
    description: str = DESCRIPTION,
    extra: str = "",
    body: str | None = None,
) -> Path:
    """The skill folder `root/rel`: its SKILL.md (`skill_md`; named after the last segment of `rel` unless
    `name` is given) and each of `files` (a path relative to the folder -> its text or bytes). Returns the
    folder."""
    folder = root / rel
    write_file(folder / "SKILL.md", skill_md(name or rel.rsplit("/", 1)[-1], description, extra, body))
    for relative, content in (files or {}).items():
        write_file(folder / relative, content)
    return folder
