"""What a native host keeps of a server's `skills/list`: its limits, and the one arithmetic of a listing under them.

The spec lets a listing be arbitrarily large; hosts do not read it all. Claude Code 2.1.337 (read from its
bundled client, `../shared/spec/landscape-2026-12-07.md` section 3) keeps, per server and connection, at most
100 skills, 20 pages and 512 KiB of entries, and stops at whichever comes first with the rest pending; it also
adopts at most 100 more skills per server and session by address (`skills/get`). A skill past the cut is not
lost: it is still loadable by address, so what an operator lists first matters (`--list` / `--unlist`).

This module is the one place that arithmetic is written. `skillwire serve`'s start-up warning
(`SkillsExtension.host_cut`), `skillwire check`'s report (`checks/audit`) and the test suite's native client
(`tests/support/native_client.py`) all walk a listing through a `ListingBudget`, so the three cannot disagree
about where a host stops. Pure: sizes in, counts out.

How an entry is measured is a guess at the host's own measure [G]: the bytes of the entry as compact JSON
(`JSON.stringify`'s form: no spaces, non-ASCII as UTF-8, not escaped). On `../shared/corpora/awesome-copilot`
this gives 350 KiB for its 400 skills, the figure issue 36 quotes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["CLAUDE_CODE", "HostCut", "HostLimits", "ListingBudget", "entry_size", "host_cut"]

Stop = Literal["skills", "pages", "bytes"]


@dataclass(frozen=True)
class HostLimits:
    """How much of one server's listing a host reads (per server and connection) and how many skills it takes
    by address (`skills/get`) per server and session."""

    host: str
    skills: int
    pages: int
    entry_bytes: int
    by_address: int

    def describe(self) -> str:
        """`100 skills, 20 pages and 512 KiB of entries`: the listing limits as a person reads them."""
        return f"{self.skills} skills, {self.pages} pages and {_kib(self.entry_bytes)} of entries"


CLAUDE_CODE = HostLimits("Claude Code 2.1.337", skills=100, pages=20, entry_bytes=512 * 1024, by_address=100)


def entry_size(entry: Mapping[str, object]) -> int:
    """The bytes one `skills/list` entry (as sent on the wire) counts against a host's byte budget."""
    return len(json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode())


class ListingBudget:
    """One listing walked under `limits`: call `page()` before reading each page (False: the host reads no
    more pages) and `admit(size)` for each entry the host accepts (False: this entry and every later one are
    dropped). Once stopped, `stopped` says by which limit, and nothing more is taken."""

    def __init__(self, limits: HostLimits) -> None:
        self.limits = limits
        self.kept = 0
        self.kept_bytes = 0
        self.pages = 0
        self.stopped: Stop | None = None

    def page(self) -> bool:
        if self.stopped is not None:
            return False
        if self.kept >= self.limits.skills:
            self.stopped = "skills"  # a next page is pending and no entry of it can be kept
        elif self.pages >= self.limits.pages:
            self.stopped = "pages"
        else:
            self.pages += 1
        return self.stopped is None

    def admit(self, size: int) -> bool:
        if self.stopped is not None:
            return False
        if self.kept >= self.limits.skills:
            self.stopped = "skills"
        elif self.kept_bytes + size > self.limits.entry_bytes:
            self.stopped = "bytes"
        else:
            self.kept += 1
            self.kept_bytes += size
        return self.stopped is None

    def why(self) -> str:
        """Why the walk stopped, in the host's terms (empty when it did not)."""
        limits = self.limits
        return {
            None: "",
            "skills": f"it keeps at most {limits.skills} skills",
            "pages": f"it reads at most {limits.pages} pages",
            "bytes": f"it reads at most {_kib(limits.entry_bytes)} of entries",
        }[self.stopped]


@dataclass(frozen=True)
class HostCut:
    """What a host keeps of a listing: the first `kept` entries (`kept_bytes` of them, over `pages` pages), and
    whether and why it stopped with entries pending (`stopped`: a `ListingBudget.stopped`)."""

    limits: HostLimits
    kept: int
    kept_bytes: int
    pages: int
    stopped: Stop | None
    why: str

    @property
    def cut(self) -> bool:
        return self.stopped is not None


def host_cut(limits: HostLimits, pages: Iterable[Iterable[int]]) -> HostCut:
    """Walk a listing given as its pages' entry sizes (`entry_size`) under `limits`. Lazy: no page or entry
    past the cut is asked for, so a caller can build entries as they are consumed."""
    budget = ListingBudget(limits)
    for sizes in pages:
        if not budget.page():
            break
        if not all(budget.admit(size) for size in sizes):
            break
    return HostCut(limits, budget.kept, budget.kept_bytes, budget.pages, budget.stopped, budget.why())


def _kib(size: int) -> str:
    return f"{size // 1024} KiB" if size % 1024 == 0 else f"{size / 1024:.1f} KiB"
