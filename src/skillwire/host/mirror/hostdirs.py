"""The skills folder each agent host documents, for syncing served skills into it (`pull --for HOST`).

Each preset is the folder the host's own documentation names, for the person (under the home
directory) and for a project (under the project's root). Every host here documents both; where a host
reads several folders, the preset is the one its documentation gives first for that host (the others
are compatibility aliases). Sources, read 2026-12-01:

- claude: Claude Code, https://code.claude.com/docs/en/skills (`~/.claude/skills/<name>/SKILL.md`,
  `.claude/skills/<name>/SKILL.md`).
- codex: OpenAI Codex, https://developers.openai.com/codex/skills (`$HOME/.agents/skills`, `.agents/skills`
  from the working directory up to the repository root; `$CODEX_HOME/skills` is the deprecated older one).
- copilot: GitHub Copilot (VS Code agent mode, Copilot CLI, cloud agent),
  https://code.visualstudio.com/docs/agents/reference/agent-skills-reference and
  https://docs.github.com/en/copilot/how-tos/copilot-on-github/customize-copilot/customize-cloud-agent/add-skills
  (`~/.copilot/skills`, `.github/skills`).
- cursor: Cursor, https://cursor.com/docs/context/skills (`~/.cursor/skills`, `.cursor/skills`; it also reads
  `.agents/skills` and the Claude and Codex folders).
- gemini: Gemini CLI, https://geminicli.com/docs/cli/using-agent-skills (`~/.gemini/skills`, `.gemini/skills`;
  `.agents/skills` is its alias, and wins over `.gemini/skills` within a tier).
- agents: the shared `.agents/skills` convention (read by Codex, Gemini CLI, Copilot and Cursor per the pages
  above): `~/.agents/skills`, `.agents/skills`.

Each skill is one folder directly inside the skills folder, named after the skill (`<folder>/<name>/SKILL.md`),
because that is the layout every one of these hosts discovers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class HostFolder:
    host: str  # the preset's name on the command line
    title: str  # the host, for messages
    user: str  # relative to the home directory
    project: str  # relative to a project's root
    source: str  # the documentation page the folders come from

    def folder(self, project: Path | None = None, home: Path | None = None) -> Path:
        """The skills folder: the project's when `project` is given, else the person's."""
        if project is not None:
            return project / self.project
        return (home if home is not None else Path.home()) / self.user


HOST_FOLDERS: dict[str, HostFolder] = {
    preset.host: preset
    for preset in (
        HostFolder(
            "claude", "Claude Code", ".claude/skills", ".claude/skills", "https://code.claude.com/docs/en/skills"
        ),
        HostFolder("codex", "Codex", ".agents/skills", ".agents/skills", "https://developers.openai.com/codex/skills"),
        HostFolder(
            "copilot",
            "GitHub Copilot",
            ".copilot/skills",
            ".github/skills",
            "https://code.visualstudio.com/docs/agents/reference/agent-skills-reference",
        ),
        HostFolder("cursor", "Cursor", ".cursor/skills", ".cursor/skills", "https://cursor.com/docs/context/skills"),
        HostFolder(
            "gemini",
            "Gemini CLI",
            ".gemini/skills",
            ".gemini/skills",
            "https://geminicli.com/docs/cli/using-agent-skills",
        ),
        HostFolder(
            "agents",
            "the .agents/skills convention",
            ".agents/skills",
            ".agents/skills",
            "https://developers.openai.com/codex/skills",
        ),
    )
}
