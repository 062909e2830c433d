"""How long a client waits and how much it accepts from a server, and the per-connection budget.

A server is untrusted input: every request has a deadline, and every answer a byte bound that is
enforced on the wire, before anything is parsed. `ClientLimits` states the bounds; `ResponseBudget`
is the per-connection object the transports (`skillwire.client.transport`) consult for each request
and that `SkillsClient` uses to tell the transport how large a file read may be, and to learn why a
transport refused an answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from skillwire.core.manifest import MAX_BYTES_PER_SKILL
from skillwire.core.protocol import METHOD_RESOURCES_READ

__all__ = ["ClientLimits"]

DEFAULT_TIMEOUT = 30.0
# JSON-RPC envelope, `_meta`, mimeType and the URI around a file's bytes; generous on purpose.
ENVELOPE_BYTES = 64 * 1024
# The worst JSON string escaping of text: a control character becomes `\u00XX` (6 bytes for 1).
JSON_TEXT_EXPANSION = 6
# Server-to-client messages that answer nothing (notifications, server requests) on a stdio pipe.
UNSOLICITED_MESSAGE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ClientLimits:
    """Bounds on one connection. Every number is a ceiling; none of them is waited for.

    - `timeout`: seconds to wait for the answer to one request (also the HTTP connect/read timeout).
    - `max_response_bytes`: bytes of any one answer that is not the read of a listed file (a
      `skills/list` page, an entry, a directory page, an unverified read).
    - `max_page_entries`: entries one `skills/list` (or directory) page may carry.
    - `max_pages`, `max_entries`, `listing_seconds`: a whole listing stops (reported in
      `Listing.stopped_early`, never a hang) after this many pages, entries, or seconds.

    The read of a listed file is bounded by its manifest size: `size * 6 + 64 KiB` bytes on the wire
    (the worst JSON escaping of text, plus the envelope), so a reply of 200 MB for a 10-byte file is
    refused after about 64 KiB.
    """

    timeout: float = DEFAULT_TIMEOUT
    max_response_bytes: int = 32 * 1024 * 1024
    max_page_entries: int = 10_000
    max_pages: int = 100
    max_entries: int = 100_000
    listing_seconds: float = 120.0

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise ValueError(f"timeout must be positive, got {self.timeout}")
        for name in ("max_response_bytes", "max_page_entries", "max_pages", "max_entries"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not self.listing_seconds > 0:
            raise ValueError(f"listing_seconds must be positive, got {self.listing_seconds}")

    def read_allowance(self, size: int | None) -> int:
        """Wire bytes accepted for a `resources/read` of a file the manifest lists as `size` bytes."""
        if size is None:
            return self.max_response_bytes
        return size * JSON_TEXT_EXPANSION + ENVELOPE_BYTES

    @property
    def largest_answer(self) -> int:
        """The largest answer any request may get (a file at the per-skill size limit)."""
        return max(self.max_response_bytes, self.read_allowance(MAX_BYTES_PER_SKILL))


@dataclass(frozen=True)
class Refusal:
    """Why a transport failed a request instead of delivering its answer."""

    kind: str  # "too-large" or "connection"
    message: str


@dataclass
class ResponseBudget:
    """Per-connection: what each request may receive, and what the transport refused, by (method, uri)."""

    limits: ClientLimits = field(default_factory=ClientLimits)
    connected: bool = False  # set once the handshake is done: from then on, transport faults stay per request
    _reads: dict[str, list[int]] = field(default_factory=dict)
    _refusals: dict[tuple[str, str | None], Refusal] = field(default_factory=dict)

    @contextmanager
    def expect_read(self, uri: str, size: int | None) -> Iterator[None]:
        """While the block runs, a `resources/read` of `uri` may receive `read_allowance(size)` bytes."""
        allowance = self.limits.read_allowance(size)
        pending = self._reads.setdefault(uri, [])
        pending.append(allowance)
        try:
            yield
        finally:
            pending.remove(allowance)
            if not pending:
                del self._reads[uri]

    def limit_for(self, method: str, params: Mapping[str, Any] | None) -> int:
        """The byte bound of the answer to one request."""
        if method == METHOD_RESOURCES_READ:
            uri = params.get("uri") if params else None
            pending = self._reads.get(uri) if isinstance(uri, str) else None
            if pending:
                return max(pending)  # concurrent reads of one URI: the most any of them may receive
        return self.limits.max_response_bytes

    def refuse(self, method: str, params: Mapping[str, Any] | None, refusal: Refusal) -> None:
        uri = params.get("uri") if params else None
        self._refusals[(method, uri if isinstance(uri, str) else None)] = refusal

    def take_refusal(self, method: str, uri: str | None) -> Refusal | None:
        return self._refusals.pop((method, uri), None)
