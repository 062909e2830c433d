"""What the model tools write outside the content frame: a refusal, the host's errors in words a model can
act on, `read_skill`'s header and `list_skills`' note about a server's refused entries.

Every string from a server in these texts is one quoted or escaped field (`core/display.py`), so none can
start a line of its own. `host/tools.py` turns each into a tool error or result.
"""

from __future__ import annotations

import difflib

from skillwire.core.display import escape as one_line
from skillwire.core.display import quoted
from skillwire.core.errors import (
    ApprovalDenied,
    CrossOriginReadDenied,
    DynamicSkillDeclined,
    HostError,
    LimitExceeded,
    ServerError,
    SkillChanged,
    SkillError,
    SkillNotActive,
    SkillNotFound,
    SkillwireError,
    UnknownOrigin,
)
from skillwire.host.active import ActiveSkill

MAX_FILES_SHOWN = 100  # files of a loaded skill named in read_skill's header
MAX_EXISTING_SHOWN = 20  # files named in a "no such file" refusal


class _Refusal(Exception):
    """A tool error decided by the tools (private to host/tool*.py); its text goes to the model as is."""


def relative_paths(skill: ActiveSkill) -> list[str]:
    return [p for p in (skill.path.file_path_of(f.uri) for f in skill.entry.files) if p is not None]


def existing_files_text(skill: ActiveSkill, wanted: str) -> str:
    paths = relative_paths(skill)
    close = difflib.get_close_matches(wanted, paths, n=3, cutoff=0.5)
    shown = ", ".join(paths[:MAX_EXISTING_SHOWN]) + (
        f", … ({len(paths) - MAX_EXISTING_SHOWN} more)" if len(paths) > MAX_EXISTING_SHOWN else ""
    )
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    return f"These exist: {shown}.{hint}"


def explain(exc: SkillwireError) -> str:
    """A refusal from the host, in words the model can act on (one distinct message per kind)."""
    if isinstance(exc, ApprovalDenied):
        if exc.changed:
            return (
                f"Not loaded: the skill changed on the server since the user approved it, so it needs re-approval "
                f"({exc}). Tell the user; it loads once they approve the new version."
            )
        return (
            f"Not loaded: not approved. The user did not approve it ({exc}). Tell the user; do not retry on your own."
        )
    if isinstance(exc, SkillNotActive):
        return (
            f"Refused: the skill changed on the server since approval and is no longer active ({exc}). "
            "Load it again with read_skill; the user must re-approve it."
        )
    if isinstance(exc, SkillChanged):
        return (
            f"Refused: what the server sent does not match the skill's manifest, so the skill changed on the server "
            f"or lied about a file ({exc}). Nothing was shown. Load it again with read_skill; the user must "
            "re-approve it."
        )
    if isinstance(exc, CrossOriginReadDenied):
        return f"Refused: {exc}. A skill from one server cannot read from another without the user's approval."
    if isinstance(exc, DynamicSkillDeclined | LimitExceeded):
        return f"Not loaded: {exc}"
    if isinstance(exc, UnknownOrigin):
        return f"Refused: {exc}."
    if isinstance(exc, SkillNotFound):
        return f"Not found: {exc}. Use list_skills to see what the server offers."
    if isinstance(exc, ServerError | HostError | SkillError):
        return f"Failed: {exc}"
    return f"Failed: {exc}"


def loaded_header(
    name: str, server: str, root_uri: str, other_files: list[str] | None, allowed_tools: str | None
) -> str:
    """`read_skill`'s lines before the framed instructions (`other_files` None: dynamic content).

    Outside the content frame, so every string from the server (the name, the file names, `allowed-tools`)
    is one quoted field (core/display.py): a file name holding a line separator cannot write a line of the
    bridge's own, such as a grant of allowed-tools the user never gave.
    """
    head = [
        f"Loaded skill {quoted(name)} from server {server!r}. Its root is {one_line(root_uri)}/ : pass "
        "paths its instructions mention (such as references/FORMS.md) to read_resource with "
        f"server={server!r}, exactly as written, or as full URIs under that root.",
    ]
    if other_files is None:
        head.append("Its files are dynamic (the server gave no manifest), so none are listed here.")
    elif other_files:
        shown = ", ".join(quoted(p, 300) for p in other_files[:MAX_FILES_SHOWN])
        more = f", … ({len(other_files) - MAX_FILES_SHOWN} more)" if len(other_files) > MAX_FILES_SHOWN else ""
        head.append(f"Its other files ({len(other_files)}, names from the server): {shown}{more}.")
    else:
        head.append("It has no other files.")
    if allowed_tools:
        head.append(f"The user granted its allowed-tools (as the server wrote them): {quoted(allowed_tools)}")
    return "\n".join(head)


def listing_problem_note(label: str, count: int, first_reason: str) -> str:
    """`list_skills`' note about a server's refused entries; the reason quotes the entry's URI as sent."""
    first = quoted(first_reason, 200)
    return f"Server {label!r}: {count} listing problem(s) (first, with the server's text quoted: {first})."
