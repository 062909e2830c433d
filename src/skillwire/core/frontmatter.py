"""Compatibility re-exports: frontmatter now lives in `skillwire.core.skill_md` (SKILL.md splitting),
`skillwire.core.yaml` (the npm-exact YAML reading) and `skillwire.core.json` (JSON values, JS equality).

Kept so that code written against the old single module keeps importing; new code imports the modules
above, and nothing in skillwire itself imports this one. The interop hazards moved out of core to
`skillwire.checks.hazards` (only lint uses them; core cannot import upward): `skillwire.interop_hazards`
and `skillwire.yaml_interop_hazards` are where they are public.
"""

from __future__ import annotations

from skillwire.core.json import JSONValue, frontmatter_differences
from skillwire.core.skill_md import SkillDocument, parse_skill_md, split_skill_md
from skillwire.core.yaml import (
    MAX_ALIAS_COUNT,
    MAX_ALIAS_NODES,
    MAX_DEPTH,
    MAX_FRONTMATTER_BYTES,
    REFUSALS,
    frontmatter_size_problem,
    parse_frontmatter,
)

__all__ = [
    "MAX_ALIAS_COUNT",
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "MAX_FRONTMATTER_BYTES",
    "REFUSALS",
    "JSONValue",
    "SkillDocument",
    "frontmatter_differences",
    "frontmatter_size_problem",
    "parse_frontmatter",
    "parse_skill_md",
    "split_skill_md",
]
