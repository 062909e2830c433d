"""The one state every step of an audit shares: findings, stats, the skills listed, progress, and
`request` (one raw request under the concurrency limit and the timeout, never raising). Each step
(`listing`, `reads`, `directories`) is an object holding this state, composed by `coordinator`.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

import anyio
from mcp.shared.exceptions import MCPError
from mcp_types import (
    Request,
)
from pydantic import ValidationError

from skillwire.checks.audit.records import AuditStats, Reply, SkillRecord, _canon
from skillwire.checks.audit.rules import RULES, Progress, Send
from skillwire.checks.findings import Finding
from skillwire.core.uri import ParsedURI


class AuditState:
    """The audit's shared state and bookkeeping: findings (deduplicated), progress, the request limiter,
    and the skills the listing found (with the root and ancestor queries every step asks)."""

    def __init__(
        self,
        send: Send,
        capabilities: Mapping[str, Any],
        *,
        protocol_version: str | None = None,
        concurrency: int = 8,
        timeout: float = 30.0,
        max_pages: int = 1000,
        max_extra_directories: int = 1000,
        progress: Progress | None = None,
        nonce: str | None = None,
    ) -> None:
        self._send = send
        self.capabilities = dict(capabilities)
        self.timeout = timeout
        self.max_pages = max_pages
        self.max_extra_directories = max_extra_directories
        self._limiter = anyio.CapacityLimiter(max(1, concurrency))
        self._progress = progress
        self._done = 0
        self._total = 0
        self.nonce = nonce or secrets.token_hex(4)
        self.findings: list[Finding] = []
        self._seen: set[tuple[str, str, str, str | None]] = set()
        self._reported: set[tuple[str, str]] = set()
        self.stats = AuditStats(protocol_version=protocol_version)
        self.skills: dict[str, SkillRecord] = {}  # canonical uri -> record, in listing order

    # -- bookkeeping ---------------------------------------------------------------------------------------

    def add(self, rule: str, skill: str, message: str, uri: str | None = None) -> None:
        if not RULES[rule].applies_to(self.stats.protocol_version):  # KeyError: not a check rule
            return
        key = (rule, skill, message, uri)
        if key not in self._seen:
            self._seen.add(key)
            self.findings.append(RULES.finding(rule, message, skill=skill, uri=uri))
            if uri is not None:
                self._reported.add((skill, _canon(uri)))

    def reported(self, skill: str, uri: str) -> bool:
        """Whether some finding on `skill` already names `uri` (one defect, one finding)."""
        return (skill, _canon(uri)) in self._reported

    def expect(self, n: int) -> None:
        """`n` more requests to come (for the progress count)."""
        self._total += n
        self._tick()

    def _tick(self) -> None:
        if self._progress is not None:
            self._progress(self._done, max(self._total, self._done))

    def roots(self) -> dict[ParsedURI, SkillRecord]:
        """Each listed skill with a parsed URI, by its root."""
        return {s.path.root: s for s in self.skills.values() if s.path is not None}

    def ancestors(self, parsed: ParsedURI, roots: Mapping[ParsedURI, SkillRecord]) -> list[SkillRecord]:
        """The skills whose root contains `parsed` (strictly above it), innermost last."""
        out: list[SkillRecord] = []
        for depth in range(1, len(parsed.segments)):
            skill = roots.get(ParsedURI(parsed.scheme, parsed.segments[:depth]))
            if skill is not None:
                out.append(skill)
        return out

    async def request(self, request: Request[Any, Any]) -> Reply:
        async with self._limiter:
            self.stats.requests += 1
            try:
                with anyio.fail_after(self.timeout):
                    result = await self._send(request)
            except MCPError as exc:
                # One line, cut: the SDK's own messages can quote the server's bytes over several lines.
                reply = Reply(None, exc.code, " ".join(exc.message.split())[:300])
            except TimeoutError:
                reply = Reply(None, None, f"nothing within {self.timeout:g} s")
            except ValidationError as exc:
                reply = Reply(None, None, f"not a JSON object result ({exc.error_count()} validation errors)")
            else:
                reply = Reply(result if isinstance(result, dict) else None, None, None)
            finally:
                self._done += 1
                self._tick()
            return reply
