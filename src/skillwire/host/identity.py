"""Who a skill is: the pair (host-assigned origin label, uri), never the uri alone.

Two servers can both publish `skill://acme/refunds/SKILL.md`; they are different skills with different
content and different approvals (requirement 6). Servers are named by a label the *host* assigns, not by
`serverInfo.name`, which a server chooses for itself and could use to impersonate another (requirement
21). The label doubles as a directory name in the content cache, so the rule below also keeps it a single
harmless path component: no `/`, no leading `.` (so never `.` or `..`, never a hidden directory).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

from skillwire.core.uri import parse_uri

__all__ = ["SkillRef"]

MAX_ORIGIN_LABEL_LENGTH = 64
# `\Z`, not `$`: Python's `$` also matches before a trailing newline.
_ORIGIN_LABEL_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}\Z")


def validate_origin_label(label: str) -> str:
    """Return `label` unchanged when it is a valid origin label; raise `ValueError` saying why not.

    A label is 1-64 characters of `A-Z a-z 0-9 . _ -` and does not start with `.`.
    """
    if not isinstance(label, str):
        raise ValueError(f"an origin label must be a string, not {type(label).__name__}")
    if _ORIGIN_LABEL_RE.match(label):
        return label
    if label == "":
        reason = "it is empty"
    elif len(label) > MAX_ORIGIN_LABEL_LENGTH:
        reason = f"it has {len(label)} characters; the limit is {MAX_ORIGIN_LABEL_LENGTH}"
    elif label.startswith("."):
        reason = "it starts with '.'"
    else:
        bad = next(c for c in label if not re.match(r"[A-Za-z0-9._-]", c))
        reason = f"it contains {bad!r}; only A-Z, a-z, 0-9, '.', '_' and '-' are allowed"
    raise ValueError(f"invalid origin label {label!r}: {reason}")


def default_label(server: str) -> str:
    """An origin label for a server named only by URL or command (`server`, as given): its text with every
    character a label does not allow made '-', cut to the limit with a checksum of the whole, so two
    servers do not share approvals. `pull --for HOST` keeps approvals under it when no `--origin` is given."""
    text = server.split("://", 1)[-1]
    label = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "server"
    if len(label) > MAX_ORIGIN_LABEL_LENGTH or label != text:
        tail = f"-{zlib.crc32(server.encode()):08x}"
        label = label[: MAX_ORIGIN_LABEL_LENGTH - len(tail)].rstrip("-.") + tail
    return label


@dataclass(frozen=True, order=True)
class SkillRef:
    """A skill as the host knows it: the origin (server) label it came from, and its `SKILL.md` URI.

    Both halves are validated on construction, so a `SkillRef` that exists is always usable as a key
    and as a path. The URI is kept exactly as given (it is compared as text, like the server sent it).
    """

    origin: str
    uri: str

    def __post_init__(self) -> None:
        validate_origin_label(self.origin)
        parse_uri(self.uri)  # raises InvalidSkillURI (a ValueError) with the reason

    def __str__(self) -> str:
        return f"{self.origin} {self.uri}"
