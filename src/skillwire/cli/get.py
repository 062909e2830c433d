"""`skillwire get URI SERVER`: one skill entry (`skills/get`): its frontmatter and a file tree with sizes
and digests. No file is read.

URI is the skill's `SKILL.md` URI; its root (`skill://acme/billing/refunds`) works too, and so does a
bare name (`refunds`) when exactly one listed skill has it (a name several skills share is refused
with their URIs, never guessed).
"""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Callable, Iterable
from typing import Any

from skillwire.cli.common import (
    Output,
    UsageError,
    add_debug_argument,
    add_output_arguments,
    add_server_arguments,
    human_size,
    printable,
    report_failure,
    run_client,
    server_target,
)
from skillwire.client.skills import SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidSkillURI, SkillNotFound, SkillwireError
from skillwire.core.json import JSONValue
from skillwire.core.uri import SKILL_MD, SkillPath, parse_uri


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "get",
        help="show one skill: frontmatter and files (reads no skill file)",
        description=(
            "Show one skill entry from skills/get: its frontmatter and its files with sizes and digests. "
            "URI is the skill's SKILL.md URI (or its root URI, or a name only one listed skill has)."
        ),
    )
    p.add_argument("uri", metavar="URI", help="the skill: skill://<path>/SKILL.md")
    add_server_arguments(p)
    add_output_arguments(p)
    add_debug_argument(p)
    p.set_defaults(run=run)


# -- naming a skill on the command line (shared with pull) -------------------------------------------------------


def skill_md_uri(text: str) -> str:
    """The SKILL.md URI for a URI written on the command line (`.../SKILL.md` or the skill root)."""
    try:
        parsed = parse_uri(text)
    except InvalidSkillURI as exc:
        raise UsageError(f"{text!r} is not a skill URI ({exc.reason}); write skill://<path>/SKILL.md") from None
    uri = text if parsed.segments[-1] == SKILL_MD else text + "/" + SKILL_MD
    try:
        SkillPath.from_skill_md_uri(uri)
    except InvalidSkillURI as exc:
        raise UsageError(f"{text!r} does not name a skill ({exc.reason})") from None
    return uri


def is_uri(text: str) -> bool:
    return "://" in text


def did_you_mean(wanted: str, candidates: Iterable[str], *, strip: Callable[[str], str] = str) -> str:
    """`; did you mean 'pdf-processing'?` for the closest few candidates, or "" when none is close.

    `strip` maps each text to the part worth comparing (a URI's skill path, not its shared
    `skill://` and `/SKILL.md`), so a common prefix does not make everything look close.
    """
    by_key: dict[str, str] = {}
    for candidate in sorted(set(candidates)):
        by_key.setdefault(strip(candidate), candidate)
    close = difflib.get_close_matches(strip(wanted), list(by_key), n=3, cutoff=0.75)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(printable(by_key[key])) for key in close) + "?"


def _skill_path_of(uri: str) -> str:
    return uri.split("://", 1)[-1].removesuffix("/" + SKILL_MD)


async def resolve_entry(client: SkillsClient, ref: str) -> SkillEntry:
    """The entry for a URI (via `skills/get`) or for a bare name (via the listing; exactly one match).

    A skill that is not found is answered with the closest listed names (or URIs), when any is close.
    """
    if is_uri(ref):
        uri = skill_md_uri(ref)
        try:
            return await client.get_skill(uri)
        except SkillNotFound as exc:
            # Only now is the listing fetched: a hit costs one skills/get, as before.
            listing = await client.list_skills()
            hint = did_you_mean(uri, (entry.uri for entry in listing.entries), strip=_skill_path_of)
            if not hint:
                raise
            better = SkillNotFound(str(exc) + hint)
            better.code, better.origin = exc.code, exc.origin
            raise better from None
    listing = await client.list_skills()
    matches = [entry for entry in listing.entries if entry.name == ref]
    if len(matches) > 1:
        uris = ", ".join(entry.uri for entry in matches)
        raise UsageError(f"{len(matches)} skills are named {ref!r}: {uris}; give the URI of the one you mean")
    if not matches:
        hint = did_you_mean(ref, (entry.name for entry in listing.entries))
        raise SkillNotFound(
            f"no listed skill is named {printable(ref)!r}"
            + (hint or " (a listing may be partial: give the skill's URI)"),
            origin=client.origin,
        )
    return matches[0]


# -- showing an entry ---------------------------------------------------------------------------------------------


def file_rows(entry: SkillEntry) -> list[tuple[str, int, str, str]]:
    """(relative path, size, digest, uri) of every listed file, sorted by path."""
    rows = []
    for item in entry.files:
        path = entry.path.file_path_of(item.uri) or item.uri
        rows.append((path, item.size, item.digest, item.uri))
    return sorted(rows)


def tree_lines(entry: SkillEntry) -> list[str]:
    """The manifest as an indented tree: directories end in `/`, files carry size and digest."""
    rows = file_rows(entry)
    listed: list[tuple[str, str, str]] = []  # (indented name, size, digest)
    shown_dirs: set[tuple[str, ...]] = set()
    for path, size, digest, _ in rows:
        parts = tuple(path.split("/"))
        for depth in range(1, len(parts)):
            directory = parts[:depth]
            if directory not in shown_dirs:
                shown_dirs.add(directory)
                listed.append(("  " * (depth - 1) + printable(parts[depth - 1]) + "/", "", ""))
        listed.append(("  " * (len(parts) - 1) + printable(parts[-1]), str(size), digest))
    name_width = max((len(name) for name, _, _ in listed), default=0)
    size_width = max((len(shown) for _, shown, _ in listed), default=0)
    lines = []
    for name, shown, digest in listed:
        if not shown:
            lines.append(name)
        else:
            lines.append(f"{name.ljust(name_width)}  {shown.rjust(size_width)}  {digest}")
    return lines


def value_lines(key: str, value: JSONValue, indent: int) -> list[str]:
    pad = "  " * indent
    shown_key = printable(key)
    if isinstance(value, dict) and value:
        out = [f"{pad}{shown_key}:"]
        for sub_key, sub_value in value.items():
            out += value_lines(sub_key, sub_value, indent + 1)
        return out
    if isinstance(value, str) and "\n" not in value and value.strip() == value and value:
        return [f"{pad}{shown_key}: {printable(value)}"]
    return [f"{pad}{shown_key}: {printable(json.dumps(value, ensure_ascii=False))}"]


def entry_lines(entry: SkillEntry) -> list[str]:
    lines = [f"uri: {printable(entry.uri)}", f"root: {printable(entry.path.root_uri)}"]
    if entry.is_dynamic:
        lines.append("files: dynamic (generated by the server: no manifest, no digests to verify)")
    else:
        lines.append(f"files: {len(entry.files)} ({entry.total_size:,} bytes, {human_size(entry.total_size)})")
    problem = entry.limit_problem()
    if problem is not None:
        lines.append(f"limits: this skill {problem}")
    lines.append("frontmatter:")
    for key, value in entry.frontmatter.items():
        lines += value_lines(key, value, 1)
    if not entry.is_dynamic:
        lines.append("tree:")
        lines += ["  " + line for line in tree_lines(entry)]
    return lines


def to_json(origin: str, entry: SkillEntry) -> dict[str, Any]:
    return {
        "origin": origin,
        "skill": entry.to_wire(),
        "files": None
        if entry.is_dynamic
        else [{"path": p, "uri": u, "digest": d, "size": s} for p, s, d, u in file_rows(entry)],
    }


def run(args: argparse.Namespace) -> int:
    target = server_target(args)
    out = Output(quiet=args.quiet, json_mode=args.json)
    if is_uri(args.uri):
        skill_md_uri(args.uri)  # a bad URI is a usage error before connecting

    async def body(client: SkillsClient) -> SkillEntry:
        return await resolve_entry(client, args.uri)

    try:
        entry = run_client(target, body)
    except SkillNotFound as exc:
        return report_failure(out, args, exc, "; `skillwire ls SERVER` lists the server's skills")
    except SkillwireError as exc:
        return report_failure(out, args, exc)
    if args.json:
        out.write(json.dumps(to_json(target.label, entry), indent=2, ensure_ascii=False) + "\n")
    elif not out.quiet:
        out.write("\n".join(entry_lines(entry)) + "\n")
    return 0
