"""Where agent hosts look for filesystem skills, so MCP-served content is never put there.

Requirement 21 ("Cache"): a disk cache of MCP skill content MUST sit outside every filesystem-skill
discovery path, or a restart would turn content from a server into a *local* skill that no approval,
origin tag or verification covers. The paths are those of the major hosts (spec agent-skills.md §4):
user-level roots, and project-level roots in the working directory and every parent (Claude Code,
Codex and OpenCode walk upwards). Codex scans its roots recursively and Claude Code loads nested
`.claude/skills` trees on demand, so any `skills` directory directly under a dot-directory is treated
as a discovery path too, wherever it is.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

# Project-level roots, looked for in the working directory and in each of its parents.
PROJECT_SKILL_DIRS: tuple[str, ...] = (
    ".claude/skills",  # Claude Code, Copilot, Cursor and OpenCode (compatibility)
    ".agents/skills",  # Codex, Gemini CLI, Copilot, Cursor, OpenCode
    ".github/skills",  # VS Code Copilot, Copilot CLI
    ".cursor/skills",  # Cursor
    ".codex/skills",  # Codex project config layer, Cursor (compatibility)
    ".gemini/skills",  # Gemini CLI
    ".opencode/skills",  # OpenCode
)

# User-level roots, relative to the home directory.
USER_SKILL_DIRS: tuple[str, ...] = (
    ".claude/skills",
    ".agents/skills",
    ".codex/skills",  # Codex's default $CODEX_HOME (deprecated there, still scanned)
    ".gemini/skills",
    ".copilot/skills",
    ".cursor/skills",
    ".config/opencode/skills",
)

# System-level roots (Codex's admin layer).
SYSTEM_SKILL_DIRS: tuple[Path, ...] = (Path("/etc/codex/skills"),)

SKILLS_DIR_NAME = "skills"


def skills_discovery_paths(
    cwd: Path | None = None,
    home: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> list[Path]:
    """Every filesystem-skill discovery root of the major hosts, absolute, without duplicates.

    `cwd` and `home` default to the process's; `environ` (default `os.environ`) supplies `$CODEX_HOME`
    and `$XDG_CONFIG_HOME`. The paths are not resolved and need not exist.
    """
    env = os.environ if environ is None else environ
    cwd = Path(os.path.abspath(Path.cwd() if cwd is None else cwd))
    home = Path(os.path.abspath(Path.home() if home is None else home))

    found: list[Path] = [home / d for d in USER_SKILL_DIRS]
    if env.get("CODEX_HOME"):
        found.append(Path(os.path.abspath(env["CODEX_HOME"])) / SKILLS_DIR_NAME)
    if env.get("XDG_CONFIG_HOME"):  # OpenCode follows XDG for its config directory
        found.append(Path(os.path.abspath(env["XDG_CONFIG_HOME"])) / "opencode" / SKILLS_DIR_NAME)
    found.extend(SYSTEM_SKILL_DIRS)
    for directory in (cwd, *cwd.parents):
        found.extend(directory / d for d in PROJECT_SKILL_DIRS)
    return list(dict.fromkeys(found))


def _both_forms(path: Path) -> tuple[Path, ...]:
    # The path as written and with symlinks resolved (in whatever part exists). Both matter: a root that
    # resolves into a discovery tree is inside it, and so is a path that reaches elsewhere through a
    # symlink *below* a discovery root, because scanners such as Codex's follow symlinks.
    written = Path(os.path.abspath(path))
    return (written, written.resolve(strict=False))


def _folded(path: Path) -> tuple[str, ...]:
    # Compare case-insensitively: on macOS and Windows `~/.Claude/Skills` *is* `~/.claude/skills`. On a
    # case-sensitive file system this only refuses more, never less.
    return tuple(part.casefold() for part in path.parts)


def _is_within(inner: tuple[str, ...], outer: tuple[str, ...]) -> bool:
    return inner[: len(outer)] == outer


def path_is_within(path: Path, container: Path) -> bool:
    """True when `path` is `container` or lies below it, comparing as written and resolved, ignoring case."""
    folded_containers = {_folded(form) for form in _both_forms(container)}
    return any(_is_within(_folded(form), outer) for form in _both_forms(path) for outer in folded_containers)


def dot_directory_skills_root(path: Path) -> Path | None:
    """The nearest `.<anything>/skills` directory that is `path` or contains it (no resolving), or None."""
    parts = path.parts
    for index in range(len(parts) - 1, 0, -1):
        if parts[index].casefold() == SKILLS_DIR_NAME and parts[index - 1].startswith("."):
            return Path(*parts[: index + 1])
    return None


def is_inside_discovery_path(
    path: Path,
    discovery_paths: Iterable[Path] | None = None,
    *,
    cwd: Path | None = None,
    home: Path | None = None,
) -> Path | None:
    """The discovery path that contains `path` (or is it), or None when `path` is outside all of them.

    Both sides are compared as written and with symlinks resolved. `discovery_paths` defaults to
    `skills_discovery_paths(cwd, home)`. Besides the listed roots, any `skills` directory directly under
    a dot-directory counts, so the answer for such a path is that directory.
    """
    roots = skills_discovery_paths(cwd, home) if discovery_paths is None else list(discovery_paths)
    for root in roots:
        if path_is_within(path, root):
            return root
    for target in _both_forms(path):
        dot_root = dot_directory_skills_root(target)
        if dot_root is not None:
            return dot_root
    return None
