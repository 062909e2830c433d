"""The `<available_skills>` text: what the model is told about the skills it may load.

One line per skill (name, origin and URI as attributes, the description as the body, all escaped),
local skills first, within a character budget. When everything does not fit, descriptions are
shortened first (1024, 300, 120, 60 characters, then none); skills that still do not fit are counted
in an `<omitted>` line, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from skillwire.host.registry import RegisteredSkill

# Each step shortens every description to at most this many characters; 0 leaves none.
_DESCRIPTION_STEPS = (1024, 300, 120, 60, 0)
_OMITTED_ROOM = 80  # characters kept free for the `<omitted>` line


def available_skills_prompt(skills: Iterable[RegisteredSkill], *, budget_chars: int = 8000) -> str:
    """The skills for the model's context, within `budget_chars` (see the module docstring); "" for none."""
    ordered = sorted(skills, key=lambda s: (s.kind != "local", s.display_name))
    if not ordered:
        return ""
    for limit in _DESCRIPTION_STEPS:
        text = "\n".join(skill_line(s, limit) for s in ordered)
        if len(text) <= budget_chars:
            return f"<available_skills>\n{text}\n</available_skills>"
    kept: list[str] = []
    used = 0
    for line in (skill_line(s, 0) for s in ordered):
        if used + len(line) + 1 > budget_chars - _OMITTED_ROOM:
            break
        kept.append(line)
        used += len(line) + 1
    omitted = len(ordered) - len(kept)
    kept.append(f'<omitted count="{omitted}">call list_skills to see the rest</omitted>')
    return "<available_skills>\n" + "\n".join(kept) + "\n</available_skills>"


def skill_line(skill: RegisteredSkill, description_limit: int) -> str:
    """One `<skill>` element, its description cut to `description_limit` characters (with `…`)."""
    description = skill.description
    if len(description) > description_limit:
        description = description[: max(0, description_limit - 1)].rstrip() + ("…" if description_limit else "")
    return (
        f'<skill name="{escape(skill.display_name)}" origin="{escape(skill.ref.origin)}" '
        f'uri="{escape(skill.ref.uri)}">{escape(description)}</skill>'
    )
