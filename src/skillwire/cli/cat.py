"""`skillwire cat URI SERVER`: the verified bytes of one file of a skill, on stdout.

The skill that holds the file is found with `skills/get`, innermost first (`skill://a/b/x.md` tries
`skill://a/b/SKILL.md`, then `skill://a/SKILL.md`). The file must be listed in that skill's manifest;
an unlisted file is refused without being read. The bytes are checked against the manifest's size
and digest, and a SKILL.md's frontmatter against the entry's, field by field. Only bytes that pass
are written; on a mismatch stdout stays empty, stderr says what differed, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from skillwire.cli.args import UsageError, add_debug_argument, add_output_arguments, add_server_arguments, server_target
from skillwire.cli.connect import run_client
from skillwire.cli.output import Output, printable
from skillwire.cli.resolve import is_uri
from skillwire.client.skills import SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import (
    InvalidSkillURI,
    SkillNotFound,
    SkillwireError,
    UnlistedFile,
    VerificationFailed,
)
from skillwire.core.manifest import ManifestFile
from skillwire.core.uri import SKILL_MD, canonical_uri, format_uri, parse_uri
from skillwire.host.fetch import fetch_skill_md, fetch_verified
from skillwire.host.resolve import did_you_mean, resolve_entry


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "cat",
        help="print the verified bytes of one file of a skill",
        description=(
            "Write one file of a skill (SKILL.md or a supporting file) to stdout, after checking it against "
            "the skill's manifest: size, digest, and for SKILL.md the frontmatter field by field. "
            "On a mismatch nothing is written to stdout and the exit code is 1. The file may be named by "
            "its URI or as NAME/PATH, NAME being a skill's name only one listed skill has."
        ),
    )
    p.add_argument(
        "uri",
        metavar="URI",
        help="the file: skill://<skill-path>/<file-path>, or NAME/<file-path> for a listed skill's name "
        "(NAME alone is its SKILL.md)",
    )
    add_server_arguments(p)
    add_output_arguments(p, json=False)
    add_debug_argument(p)
    p.set_defaults(run=run)


def listed_file(entry: SkillEntry, uri: str) -> ManifestFile | None:
    """The manifest item for `uri`, comparing canonical forms (`%78.md` is `x.md`)."""
    wanted = canonical_uri(uri)
    for item in entry.files:
        if canonical_uri(item.uri) == wanted:
            return item
    return None


async def find_skill(client: SkillsClient, file_uri: str) -> SkillEntry:
    """The innermost skill on the server whose root holds `file_uri` (by `skills/get`, listed or not)."""
    parsed = parse_uri(file_uri)
    tried = []
    for depth in range(len(parsed.segments) - 1, 0, -1):
        candidate = format_uri(parsed.scheme, (*parsed.segments[:depth], SKILL_MD))
        tried.append(candidate)
        try:
            return await client.get_skill(candidate)
        except SkillNotFound:
            continue
    raise SkillNotFound(
        f"no skill on the server holds {file_uri} (skills/get knows none of: {', '.join(tried)})",
        origin=client.origin,
    )


def failure_line(exc: SkillwireError) -> str:
    """One line for a refused file, with what to do about it."""
    text = printable(str(exc))
    if isinstance(exc, VerificationFailed) and not isinstance(exc, UnlistedFile):
        return (
            f"refused {text}. The server's bytes do not match its own manifest: "
            "retry if the skill is being updated, else tell the server's operator"
        )
    return text


def split_name_reference(text: str) -> tuple[str, str]:
    """`pdf-processing/references/FORMS.md` -> (`pdf-processing`, `references/FORMS.md`); a bare name is
    its SKILL.md. Skill names never hold `/`, so the first segment is the name."""
    name, _, file_path = text.partition("/")
    if not name:
        raise UsageError(f"{text!r} names no skill: write NAME/<file-path> or skill://<skill-path>/<file-path>")
    return name, file_path or SKILL_MD


def closest_files(entry: SkillEntry, uri: str) -> str:
    """`; did you mean 'references/FORMS.md'?` from the skill's manifest, or ""."""
    wanted = entry.path.file_path_of(uri) or uri
    paths = [entry.path.file_path_of(item.uri) or item.uri for item in entry.files]
    return did_you_mean(wanted, paths)


def run(args: argparse.Namespace) -> int:
    target = server_target(args)
    out = Output(quiet=args.quiet)
    by_name = not is_uri(args.uri)
    if by_name:
        name, file_path = split_name_reference(args.uri)
    else:
        try:
            parsed = parse_uri(args.uri)
        except InvalidSkillURI as exc:
            raise UsageError(f"{args.uri!r} is not a skill file URI ({exc.reason})") from None
        if len(parsed.segments) < 2:
            raise UsageError(f"{args.uri!r} names no file: write skill://<skill-path>/<file-path>")

    async def body(client: SkillsClient) -> bytes:
        if by_name:
            entry = await resolve_entry(client, name)
            try:
                uri = entry.path.resolve(file_path)
            except InvalidSkillURI as exc:
                raise UsageError(f"{file_path!r} is not a file path inside {entry.name} ({exc.reason})") from None
        else:
            entry = await find_skill(client, args.uri)
            uri = args.uri
        over = entry.limit_problem()
        if over is not None:
            # The bytes still verify, so they are printed; but say that hosts will not load this skill.
            out.warn(
                f"warning: {printable(entry.uri)} {over}; a host (SkillHost) refuses to load it, "
                "and `skillwire pull` skips it"
            )
        if entry.is_dynamic:
            raise SkillNotFound(
                f"{entry.uri} is dynamic: the server publishes no digests, so nothing can be verified; not read",
                origin=client.origin,
            )
        listed = listed_file(entry, uri)
        if listed is None:
            error = UnlistedFile(uri, entry.uri)
            error.args = (str(error) + closest_files(entry, uri),)
            raise error
        if listed.uri == entry.uri:
            return await fetch_skill_md(client, entry)
        return await fetch_verified(client, listed)

    try:
        data = run_client(target, body)
    except SkillwireError as exc:
        if getattr(args, "debug", False):
            raise
        hint = ""
        if isinstance(exc, UnlistedFile):
            hint = f"; `skillwire get {printable(exc.skill_uri)} SERVER` lists its files"
        out.error(f"skillwire: {failure_line(exc)}{hint}")
        return 1
    stream = getattr(sys.stdout, "buffer", None) if out.stdout is sys.stdout else None
    if stream is not None:
        stream.write(data)
        stream.flush()
    else:
        out.write(data.decode("utf-8", errors="replace"))
    return 0
