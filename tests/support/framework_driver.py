"""Drive `skillwire bridge` through one agent framework's own MCP client layer, as an agent loop would, with no model.

Run as a script, by `tests/e2e/test_frameworks.py`: `python framework_driver.py PLAN_JSON` with the project's
interpreter (fastmcp, pydantic-ai, openai-agents: they accept the project's `mcp` 2.x) or with
`.tools/frameworks/bin/python` (langchain-mcp-adapters and mcp-use pin `mcp<2`, so they live in a venv of their own
from `scripts/install-tools`). Only the standard library is imported at the top, so the script runs in either.

The plan names the framework, the transport (the framework spawns the bridge over stdio, or connects to a running
`bridge --http`), and what to do: `walk` lists the tools, pages `list_skills` to the end following each page's
cursor, runs one query, then loads one skill with `read_skill` (answering its approval question where the framework
can be asked) and reads one of its files; `load` does only the last two. It prints one JSON report on stdout; the
test asserts on it, so nothing here decides whether the bridge is right.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any

# (is_error, the text a model would read, structuredContent when the framework hands it over)
Outcome = tuple[bool, str, dict[str, Any] | None]
Call = Callable[[str, dict[str, Any]], Awaitable[Outcome]]

SKILL_TAG = re.compile(r'<skill name="[^"]*" server="([^"]*)" uri="([^"]*)">')
CURSOR = re.compile(r'cursor="([^"]+)"')


class Recorder:
    """The approval questions the bridge asked, answered "load" for the one skill the plan expects."""

    def __init__(self, approve_name: str) -> None:
        self.approve_name = approve_name
        self.messages: list[str] = []

    def answer(self, message: str, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        """The form's content to accept with, or None to decline."""
        self.messages.append(message)
        if f'"{self.approve_name}"' not in message:
            return None
        properties = (schema or {}).get("properties", {})
        return {key: True for key in properties if key != "allow_tools"}


def text_blocks(content: Any) -> str:
    """The text of MCP content blocks, whichever shape a framework returns (objects, dicts or a string)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if isinstance(block, str):  # pydantic-ai maps a text block to the plain string a model is given
            parts.append(block)
            continue
        text = block.get("text") if isinstance(block, dict) else getattr(block, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def page_items(outcome: Outcome) -> tuple[list[list[str]], str | None, str]:
    """The (server, uri) pairs of one list_skills page and its next cursor, from structuredContent if the framework
    hands it over, else from the text (what a model reading text sees)."""
    _, text, structured = outcome
    if structured is not None and isinstance(structured.get("skills"), list):
        items = [[str(s["server"]), str(s["uri"])] for s in structured["skills"]]
        cursor = structured.get("nextCursor")
        return items, cursor if isinstance(cursor, str) else None, "structured"
    items = [[server, uri] for server, uri in SKILL_TAG.findall(text)]
    found = CURSOR.search(text)
    return items, found.group(1) if found else None, "text"


async def walk(plan: dict[str, Any], tool_names: list[str], call: Call) -> dict[str, Any]:
    report: dict[str, Any] = {"tools": tool_names}
    if plan["mode"] == "walk":
        pages: list[dict[str, Any]] = []
        cursor: str | None = None
        while len(pages) < 100:  # a bridge that never ends its listing fails the test, it does not hang it
            outcome = await call("list_skills", {} if cursor is None else {"cursor": cursor})
            items, cursor, source = page_items(outcome)
            notice = outcome[2].get("notice") if outcome[2] is not None else None
            pages.append({"error": outcome[0], "items": items, "source": source, "notice": notice})
            if outcome[0] or cursor is None:
                break
        report["pages"] = pages
        found = await call("list_skills", {"query": plan["query"]})
        report["query"] = {"error": found[0], "items": page_items(found)[0]}
    skill = plan["skill"]
    loaded = await call("read_skill", {"server": skill["server"], "uri": skill["uri"]})
    report["read_skill"] = {"error": loaded[0], "text": loaded[1]}
    resource = await call("read_resource", {"server": skill["server"], "uri": plan["resource"]})
    report["read_resource"] = {"error": resource[0], "text": resource[1]}
    return report


# --------------------------------------------------------------------------------------------------------------------
# One adapter per framework: connect the way its documentation says, and turn its tool result into an Outcome.
# --------------------------------------------------------------------------------------------------------------------


async def run_fastmcp(plan: dict[str, Any], recorder: Recorder) -> dict[str, Any]:
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    async def on_elicit(message: str, response_type: Any, params: Any, context: Any) -> Any:
        from fastmcp.client.elicitation import ElicitResult

        content = recorder.answer(message, getattr(params, "requested_schema", None))
        return ElicitResult(action="decline") if content is None else content

    target: Any = plan["url"] if plan["transport"] == "http" else stdio_transport(StdioTransport, plan)
    async with Client(target, elicitation_handler=on_elicit, timeout=120) as client:
        tools = [t.name for t in await client.list_tools()]

        async def call(name: str, arguments: dict[str, Any]) -> Outcome:
            result = await client.call_tool(name, arguments, raise_on_error=False)
            return bool(result.is_error), text_blocks(result.content), result.structured_content

        return await walk(plan, tools, call)


def stdio_transport(factory: Any, plan: dict[str, Any]) -> Any:
    command = plan["command"]
    return factory(command=command[0], args=command[1:], env=plan["env"])


async def run_pydantic_ai(plan: dict[str, Any], recorder: Recorder) -> dict[str, Any]:
    from fastmcp.client.elicitation import ElicitResult
    from fastmcp.client.transports import StdioTransport
    from fastmcp.exceptions import ToolError
    from pydantic_ai.mcp import MCPToolset

    async def on_elicit(message: str, response_type: Any, params: Any, context: Any) -> Any:
        content = recorder.answer(message, getattr(params, "requested_schema", None))
        return ElicitResult(action="decline") if content is None else content

    target: Any = plan["url"] if plan["transport"] == "http" else stdio_transport(StdioTransport, plan)
    # 'error': a tool error reaches us as an exception carrying the tool's text, not as a retry for a model.
    toolset: Any = MCPToolset(
        target, elicitation_handler=on_elicit, tool_error_behavior="error", init_timeout=120, read_timeout=120
    )
    async with toolset:
        tools = [t.name for t in await toolset.list_tools()]

        async def call(name: str, arguments: dict[str, Any]) -> Outcome:
            try:
                value = await toolset.direct_call_tool(name, arguments)
            except ToolError as exc:
                return True, str(exc), None
            if isinstance(value, dict):  # pydantic-ai hands a model the structuredContent when there is one
                return False, json.dumps(value), value
            return False, text_blocks(value if isinstance(value, (list, str)) else [value]), None

        return await walk(plan, tools, call)


async def run_openai_agents(plan: dict[str, Any], recorder: Recorder) -> dict[str, Any]:
    from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

    server: Any
    if plan["transport"] == "http":
        server = MCPServerStreamableHttp(params={"url": plan["url"]}, client_session_timeout_seconds=120)
    else:
        command = plan["command"]
        params = {"command": command[0], "args": command[1:], "env": plan["env"]}
        server = MCPServerStdio(params=params, client_session_timeout_seconds=120)  # type: ignore[arg-type]
    # openai-agents' MCP client has no elicitation callback: the bridge must name the approve command instead.
    async with server:
        tools = [t.name for t in await server.list_tools()]

        async def call(name: str, arguments: dict[str, Any]) -> Outcome:
            result = await server.call_tool(name, arguments)
            structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
            return (
                bool(result.is_error if hasattr(result, "is_error") else result.isError),
                text_blocks(result.content),
                structured,
            )

        return await walk(plan, tools, call)


async def run_langchain(plan: dict[str, Any], recorder: Recorder) -> dict[str, Any]:
    from langchain_core.tools import ToolException
    from langchain_mcp_adapters.callbacks import Callbacks
    from langchain_mcp_adapters.client import MultiServerMCPClient
    from mcp.types import ElicitResult

    async def on_elicit(mcp_context: Any, params: Any, context: Any) -> Any:
        content = recorder.answer(params.message, getattr(params, "requestedSchema", None))
        return ElicitResult(action="decline") if content is None else ElicitResult(action="accept", content=content)

    if plan["transport"] == "http":
        connection: dict[str, Any] = {"transport": "streamable_http", "url": plan["url"]}
    else:
        command = plan["command"]
        connection = {"transport": "stdio", "command": command[0], "args": command[1:], "env": plan["env"]}
    client = MultiServerMCPClient({"skills": connection}, callbacks=Callbacks(on_elicitation=on_elicit))
    # The default: get_tools() without a session, so each call runs in a new session (a new bridge over stdio).
    tools = {tool.name: tool for tool in await client.get_tools()}

    async def call(name: str, arguments: dict[str, Any]) -> Outcome:
        try:
            content = await tools[name].ainvoke(arguments)
        except ToolException as exc:
            return True, str(exc), None
        return False, text_blocks(content), None

    return await walk(plan, list(tools), call)


async def run_mcp_use(plan: dict[str, Any], recorder: Recorder) -> dict[str, Any]:
    from mcp.types import ElicitResult
    from mcp_use import MCPClient

    async def on_elicit(context: Any, params: Any) -> Any:
        content = recorder.answer(params.message, getattr(params, "requestedSchema", None))
        return ElicitResult(action="decline") if content is None else ElicitResult(action="accept", content=content)

    if plan["transport"] == "http":
        server: dict[str, Any] = {"url": plan["url"]}
    else:
        command = plan["command"]
        server = {"command": command[0], "args": command[1:], "env": plan["env"]}
    client = MCPClient(config={"mcpServers": {"skills": server}}, elicitation_callback=on_elicit)
    session = await client.create_session("skills")
    try:
        tools = [t.name for t in await session.list_tools()]

        async def call(name: str, arguments: dict[str, Any]) -> Outcome:
            result = await session.call_tool(name, arguments)
            return bool(result.isError), text_blocks(result.content), result.structuredContent

        return await walk(plan, tools, call)
    finally:
        await client.close_all_sessions()


RUNNERS: dict[str, Callable[[dict[str, Any], Recorder], Awaitable[dict[str, Any]]]] = {
    "fastmcp": run_fastmcp,
    "pydantic-ai": run_pydantic_ai,
    "openai-agents": run_openai_agents,
    "langchain-mcp-adapters": run_langchain,
    "mcp-use": run_mcp_use,
}


async def main(plan: dict[str, Any]) -> None:
    recorder = Recorder(plan["approve_name"])
    report = await RUNNERS[plan["framework"]](plan, recorder)
    report["elicited"] = recorder.messages
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
