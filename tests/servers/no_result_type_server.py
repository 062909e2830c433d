"""A skillwire skills server over stdio whose `skills/list` and `skills/get` results lack `resultType`, for the
native client's refusal (Claude Code 2.1.337 refuses a 2026-07-28 result without it).

    python tests/servers/no_result_type_server.py

The real `SkillsExtension` over one skill defined in code; a middleware drops `resultType` from those two
methods' results on their way out, and nothing else changes.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer

from skillwire.catalog.catalog import SkillCatalog
from skillwire.server.app import serve_stdio
from skillwire.server.extension import SkillsExtension

SKILL_MD = "---\nname: hello\ndescription: Says hello.\n---\nHello.\n"


async def without_result_type(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    result = await call_next(ctx)
    if ctx.method in ("skills/list", "skills/get") and isinstance(result, dict):
        return {key: value for key, value in result.items() if key != "resultType"}
    return result


def main() -> None:
    catalog = SkillCatalog()
    catalog.add_files("hello", {"SKILL.md": SKILL_MD})
    skills = SkillsExtension(catalog)
    server = MCPServer(
        "no-result-type",
        extensions=[skills],
        middleware=[without_result_type, *skills.middleware()],
        subscriptions=skills.subscriptions,
    )
    anyio.run(lambda: serve_stdio(server, skills, watch=False))


if __name__ == "__main__":
    main()
