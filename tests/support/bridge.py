"""Helpers for the `skillwire bridge` tests: generated upstream catalogs and a real MCP client on the bridge.

The bridge always runs as a subprocess over stdio (`python -m skillwire.cli.main bridge ...`), driven
by the `mcp` SDK's `Client`, in the protocol era the test picks (`auto` negotiates 2026-07-28 with
this SDK; `legacy` is the 2025-11-25 initialize handshake).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters

from support import skills

BRIDGE = [sys.executable, "-m", "skillwire.cli.main", "bridge"]
SKILLWIRE = [sys.executable, "-m", "skillwire.cli.main"]


def write_skill(root: Path, name: str, description: str, body: str = "", files: dict[str, str] | None = None) -> Path:
    """One skill folder `root/name` with SKILL.md and the given supporting files (relative path -> text)."""
    return skills.write_skill(root, name, files, description=description, body=f"{body or 'Do the task.'}\n")


def generate_skills(root: Path, prefix: str, count: int) -> None:
    """`count` small skills with distinct names and ordinary descriptions."""
    topics = ["invoices", "refunds", "spreadsheets", "meetings", "releases", "reviews", "deploys", "tickets"]
    for index in range(count):
        topic = topics[index % len(topics)]
        write_skill(
            root,
            f"{prefix}-{topic}-{index:03d}",
            f"Helps with {topic} (variant {index} of {prefix}).",
            files={"notes.md": f"Notes for {prefix} {index}.\n"},
        )


@dataclass
class Elicitor:
    """An elicitation callback that records each prompt and answers by a rule."""

    accept: bool = True
    answers: dict[str, bool] = field(default_factory=dict)  # substring of the message -> accept?
    content: dict[str, str | int | float | bool | list[str] | None] | None = None
    asked: list[types.ElicitRequestParams] = field(default_factory=list)
    cancel: bool = False  # answer `cancel` (dismissed, or nobody there to ask), as Claude Code's print mode does

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        self.asked.append(params)
        message = params.message
        if self.cancel:
            return types.ElicitResult(action="cancel")
        accept = next((yes for key, yes in self.answers.items() if key in message), self.accept)
        if not accept:
            return types.ElicitResult(action="decline")
        schema = getattr(params, "requested_schema", {}) or {}
        properties = schema.get("properties", {})
        default: dict[str, str | int | float | bool | list[str] | None] = {
            key: True for key in properties if key != "allow_tools"
        }
        return types.ElicitResult(action="accept", content=self.content if self.content is not None else default)

    @property
    def messages(self) -> list[str]:
        return [p.message for p in self.asked]


@asynccontextmanager
async def bridge_client(
    args: Sequence[str],
    *,
    mode: str = "auto",
    elicitor: Elicitor | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    """A connected SDK client on `skillwire bridge ARGS` over stdio; without `elicitor` it cannot elicit."""
    # The whole environment, not the SDK's safe default: the test's XDG directories must reach the bridge,
    # or its content cache would land in the real user's cache directory.
    environment = {**os.environ, **(env or {})}
    params = StdioServerParameters(command=BRIDGE[0], args=[*BRIDGE[1:], *args], env=environment)
    extra: dict[str, Any] = {"elicitation_callback": elicitor} if elicitor is not None else {}
    async with Client(params, mode=mode, read_timeout_seconds=60, **extra) as client:
        yield client


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
