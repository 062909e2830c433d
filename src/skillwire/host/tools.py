"""Tools for the model: `list_skills`, `read_skill(server, uri)`, `read_resource(server, uri)`.

JSON Schemas plus one async handler, so any tool-calling loop can offer them. `read_skill` is the
only activation path (it goes through `SkillHost.load`: approval, verification); `read_resource` is an
ordinary read, also of a SKILL.md, and never activates anything. Results are framed with their
origin and an untrusted-content notice; refusals come back as tool errors the model can act on
("the skill changed; ask the user to re-approve"), never as exceptions that end the turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillwire.core.errors import (
    ApprovalDenied,
    CrossOriginReadDenied,
    DynamicSkillDeclined,
    HostError,
    LimitExceeded,
    ServerError,
    SkillChanged,
    SkillError,
    SkillwireError,
)
from skillwire.host.active import ActiveSkill
from skillwire.host.host import SkillHost

_SERVER_AND_URI = {
    "type": "object",
    "properties": {
        "server": {"type": "string", "description": "The origin label shown in list_skills (not a server's own name)."},
        "uri": {"type": "string", "description": "The exact URI shown in list_skills, e.g. skill://x/SKILL.md."},
    },
    "required": ["server", "uri"],
    "additionalProperties": False,
}

TOOL_DEFINITIONS: list[dict[str, Any]] = [
    {
        "name": "list_skills",
        "description": "List the skills available from every configured origin: name, description, origin, uri.",
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    {
        "name": "read_skill",
        "description": (
            "Load a skill and return its instructions (SKILL.md). This is the only way to activate a skill; "
            "the user may be asked to approve it. Use the server and uri exactly as list_skills shows them."
        ),
        "input_schema": _SERVER_AND_URI,
    },
    {
        "name": "read_resource",
        "description": (
            "Read a file of a skill you loaded (its URI, as referenced by its instructions) or any other resource "
            "of a server; a directory URI lists its entries. Reading a SKILL.md here does not activate it."
        ),
        "input_schema": _SERVER_AND_URI,
    },
]


@dataclass(frozen=True)
class ToolResult:
    text: str
    is_error: bool = False


def _explain(exc: SkillwireError) -> str:
    if isinstance(exc, ApprovalDenied):
        return f"Not loaded: the user did not approve it. {exc}"
    if isinstance(exc, SkillChanged):
        return (
            f"Refused: the skill changed on the server since it was approved, or lied about a file ({exc}). "
            "Ask the user to load and re-approve it."
        )
    if isinstance(exc, CrossOriginReadDenied):
        return f"Refused: {exc}. A skill from one server cannot read from another without the user's approval."
    if isinstance(exc, DynamicSkillDeclined | LimitExceeded):
        return f"Not loaded: {exc}"
    if isinstance(exc, ServerError | HostError | SkillError):
        return f"Failed: {exc}"
    return f"Failed: {exc}"


class SkillTools:
    def __init__(self, host: SkillHost) -> None:
        self.host = host

    @property
    def definitions(self) -> list[dict[str, Any]]:
        return TOOL_DEFINITIONS

    def _acting(self) -> ActiveSkill | None:
        return next((s for s in reversed(self.host.active) if s.active), None)

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        args = arguments or {}
        try:
            if name == "list_skills":
                await self.host.list_skills()
                catalog = self.host.catalog()
                return ToolResult(catalog or "No skills are available.")
            server, uri = args.get("server"), args.get("uri")
            if not isinstance(server, str) or not isinstance(uri, str):
                return ToolResult("Both 'server' and 'uri' are required strings.", is_error=True)
            if name == "read_skill":
                skill = await self.host.load(server, uri)
                return ToolResult(skill.instructions.render())
            if name == "read_resource":
                return ToolResult(await self._read_resource(server, uri))
            return ToolResult(f"Unknown tool {name!r}.", is_error=True)
        except SkillwireError as exc:
            return ToolResult(_explain(exc), is_error=True)

    async def _read_resource(self, server: str, uri: str) -> str:
        acting = self._acting()
        for skill in reversed(self.host.active):
            if (
                not skill.active
                or skill.ref.origin != server
                or (skill.path.file_path_of(uri) is None and uri != skill.root_uri)
            ):
                continue
            if uri in {f.uri for f in skill.entry.files}:
                return (await skill.read(uri)).render()
            view = skill.list_directory(uri)  # a directory of the held skill, from its manifest
            lines = [f"{d}/ (directory)" for d in view.directories] + [f"{f.uri} ({f.size} bytes)" for f in view.files]
            return f"Directory {view.uri} of skill {skill.ref.uri} (origin {server!r}):\n" + "\n".join(lines)
        return (await self.host.read_resource(server, uri, acting=acting)).render()
