"""Tools for the model: `list_skills(query?, cursor?)`, `read_skill(server, uri)`, `read_resource(server, uri)`.

JSON Schemas in the shapes the common tool-calling APIs take (an MCP tool, Anthropic `input_schema`,
OpenAI function `parameters`) plus one async handler, so any agent loop, and the `skillwire bridge`
MCP server, can offer the same three tools.

- `list_skills` pages over the whole registry (every origin, origin-tagged, names collision-qualified)
  with descriptions, `page_size` at a time, and a `nextCursor` while more remain. With `query`, the
  skills are ranked by SQLite FTS5 BM25 over name, description, self-defined aliases and, where the
  host holds it verified, the SKILL.md body (`host/search.py`); a task-length query's weak matches
  are cut, so `total` says how many matched well. The structured result carries `notice`, the
  untrusted-content notice, for clients that pass a model only `structuredContent`.
  Cursors are opaque to the model and validated here. Browsing (no query) is keyset-paged on the
  skill's identity (origin label, uri), so a cursor keeps working when the catalog changes between
  pages: no skill that existed throughout is repeated or skipped (one added behind the cursor is
  simply not reached until the next listing). A query's order depends on the whole catalog (BM25
  statistics), so a query cursor is bound to the catalog version it was issued for; once the catalog
  changes it is refused with a tool error that says to run the query again.
- `read_skill` is the only activation path (`SkillHost.load`: entry, limits, approval, verified
  SKILL.md); its result names the skill root so relative references resolve.
- `read_resource` reads a file of an active skill (absolute URI, or a path relative to the skill root as
  SKILL.md writes it), lists a directory, or does an ordinary read of any other resource of that
  server. Reading a SKILL.md this way never activates anything.

Results are framed with their origin and an untrusted-content notice. Every refusal is a tool error
that says what is true and what to do, never an exception that ends the model's turn.

The jobs are modules of their own: the definitions and schemas (`host/tool_schemas.py`), the listing and
its cursors (`host/tool_listing.py`), the reads (`host/tool_reads.py`) and the texts written outside the
content frame (`host/tool_messages.py`); this module is the `SkillTools` facade that dispatches a call.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillwire.core.display import escape as one_line
from skillwire.core.errors import SkillwireError
from skillwire.host.host import SkillHost, SkillSession
from skillwire.host.search import SkillSearch
from skillwire.host.tool_listing import SkillListing
from skillwire.host.tool_messages import _Refusal, explain
from skillwire.host.tool_reads import SkillReads
from skillwire.host.tool_schemas import (
    INSTRUCTIONS as INSTRUCTIONS,  # the README names skillwire.host.tools.INSTRUCTIONS
)
from skillwire.host.tool_schemas import TOOL_NAMES, ToolShape, check_arguments, tool_definitions

__all__ = ["SkillTools", "ToolResult"]

logger = logging.getLogger("skillwire.host.tools")


@dataclass(frozen=True)
class ToolResult:
    text: str
    is_error: bool = False
    structured: dict[str, Any] | None = None


class SkillTools:
    """The three model tools over one `SkillHost`: `list_skills`, `read_skill(server, uri)` and
    `read_resource(server, uri)`. `tool_definitions(shape)` gives their definitions in the MCP,
    Anthropic or OpenAI shape; `call(name, arguments)` runs one and returns a `ToolResult` whose
    content is framed with its origin and an untrusted-content notice (errors are results too).

    Parameters
    ----------
    host:
        The `SkillHost` whose skills the model may list and load (its policy decides loads).
    page_size:
        How many skills one `list_skills` page holds.
    session:
        The conversation whose loaded skills `read_skill` adds to and `read_resource` resolves against
        (`SkillHost.session()`); by default the host's own. `for_session` gives the same tools (one search
        index, one cursor namespace) over another conversation.
    cursor_secret:
        The key `list_skills` cursors are MAC'd with, so nobody else can write one. By default
        `$SKILLWIRE_LIST_SKILLS_SECRET` (what replicas that continue each other's cursors share), else this
        install's own, made once and kept with mode 0600 in the user config directory
        (`skillwire/list-skills-cursor.key`).
    """

    def __init__(
        self,
        host: SkillHost,
        *,
        page_size: int = 50,
        session: SkillSession | None = None,
        cursor_secret: bytes | None = None,
    ) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.host = host
        # Bodies the host already holds verified are indexed; a skill read later is indexed from then on. The
        # index file is chosen at the first query, when the host's origins are known.
        self._search = SkillSearch(host.indexable_body, path=host.search_index_path)
        self._listing = SkillListing(host, self._search, page_size, cursor_secret=cursor_secret)
        chosen = session if session is not None else host.default_session
        self._reads = SkillReads(host, chosen, self._search, self._listing.refresh)

    @property
    def session(self) -> SkillSession:
        """The conversation these tools load into and read in."""
        return self._reads.session

    def for_session(self, session: SkillSession) -> SkillTools:
        """These tools over another conversation's loaded skills, sharing this instance's search index and
        listing (a cursor one session got continues in another: it names catalog positions, not skills)."""
        other = copy.copy(self)
        other._reads = SkillReads(self.host, session, self._search, self._listing.refresh)
        return other

    @property
    def page_size(self) -> int:
        return self._listing.page_size

    @page_size.setter
    def page_size(self, value: int) -> None:
        self._listing.page_size = value

    # -- definitions ----------------------------------------------------------------------------------------

    def tool_definitions(self, shape: ToolShape = "mcp") -> list[dict[str, Any]]:
        return tool_definitions(shape)

    @property
    def definitions(self) -> list[dict[str, Any]]:
        """The Anthropic-shaped definitions (what this property returned before the shapes existed)."""
        return tool_definitions("anthropic")

    # -- dispatch ---------------------------------------------------------------------------------------------

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        if name not in TOOL_NAMES:
            return ToolResult(f"Unknown tool {name!r}. The tools are list_skills, read_skill and read_resource.", True)
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            return ToolResult(f"{name}: the arguments must be a JSON object.", is_error=True)
        try:
            if name == "list_skills":
                text, structured = await self._listing.list_skills(arguments)
                return ToolResult(text, structured=structured)
            server, uri = self._server_and_uri(name, arguments)
            if name == "read_skill":
                return ToolResult(await self._reads.read_skill(server, uri))
            return ToolResult(await self._reads.read_resource(server, uri))
        # A refusal is one line written outside the content frame, and it quotes the server's URIs, names
        # and error texts: escaped as one line (core/display.py), so none can start a line of its own.
        except _Refusal as refusal:
            return ToolResult(one_line(str(refusal), None), is_error=True)
        except SkillwireError as exc:
            return ToolResult(one_line(explain(exc), None), is_error=True)
        except Exception as exc:  # a transport or SDK failure must not end the model's turn
            logger.warning("tool %s failed", name, exc_info=True)
            return ToolResult(one_line(f"Failed: {type(exc).__name__}: {exc}", None), is_error=True)

    def _server_and_uri(self, name: str, arguments: Mapping[str, Any]) -> tuple[str, str]:
        check_arguments(name, arguments)
        missing = [k for k in ("server", "uri") if k not in arguments]
        if missing:
            raise _Refusal(
                f"{name} needs both 'server' and 'uri' (missing: {', '.join(missing)}); "
                "use them exactly as list_skills shows them."
            )
        server, uri = arguments["server"], arguments["uri"]
        for key, value in (("server", server), ("uri", uri)):
            if not isinstance(value, str) or not value.strip():
                raise _Refusal(f"{name}: '{key}' must be a non-empty string, not {value!r:.60}.")
        known = self.host.origins()
        if server not in known:
            listed = ", ".join(repr(k) for k in known) or "none are configured"
            raise _Refusal(
                f"Unknown server label {server!r} (known: {listed}). Use the server exactly as list_skills shows it."
            )
        return server, uri.strip()

    def resolve_skill_uri(self, server: str, uri: str) -> str:
        """The SKILL.md URI `read_skill` would load for `uri` (a URI, or a listed skill's bare or qualified
        name); raises an exception whose text is the tool error when it names no skill or several."""
        return self._reads.resolve_skill_uri(server, uri)
