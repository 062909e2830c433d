"""`skillwire ls SERVER`: the server's skills as a table, from `skills/list` alone (no file is read).

One row per valid entry: name, file count, total size, flags, uri and the description, cut to the
terminal's width (when piped: to `$COLUMNS` if set, else whole, so the text is stable). Colour only
on a terminal. Flags: `dynamic` (no manifest), `collision` (another entry has the same name: tell them apart
by uri), `over-limits` (more than 512 files or 16 MiB), and the host's own verdict on a publisher signature
(`signed` by a key of the trust file, `signed-untrusted`, `bad-signature`; nothing for an unsigned skill;
`signature` in `--json`, see cli/signed.py). Entries the listing carried but that are
malformed are not in the table; they are reported on stderr (and under `malformed` in `--json`),
as are collisions and a listing that stopped early.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from skillwire.cli.args import (
    add_debug_argument,
    add_origin_argument,
    add_output_arguments,
    add_server_arguments,
    server_target,
)
from skillwire.cli.connect import run_client
from skillwire.cli.output import Output, printable, report_failure
from skillwire.cli.signed import FLAGS, origin_note, signature_check, signature_json, trusted_keys
from skillwire.client.skills import Listing, SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import SkillwireError
from skillwire.core.manifest import human_size
from skillwire.core.provenance import provenance_of
from skillwire.host.trust import SignatureCheck, TrustedKey

HEADERS = ("NAME", "FILES", "SIZE", "FLAGS", "URI", "DESCRIPTION")


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "ls",
        help="list a server's skills (reads no skill file)",
        description=(
            "List the skills a server publishes, from skills/list alone: no file is read. "
            "The server is the last argument: an http(s):// URL, or `-- COMMAND ARGS` for stdio."
        ),
    )
    add_server_arguments(p)
    add_origin_argument(p)
    add_output_arguments(p)
    add_debug_argument(p)
    p.set_defaults(run=run)


@dataclass(frozen=True)
class Row:
    entry: SkillEntry
    collision: bool
    signature: SignatureCheck  # the host's own verdict (cli/signed.py), never the server's claim

    @property
    def flags(self) -> list[str]:
        flags = []
        if self.entry.is_dynamic:
            flags.append("dynamic")
        if self.collision:
            flags.append("collision")
        if self.entry.limit_problem() is not None:
            flags.append("over-limits")
        if self.signature.status in FLAGS:
            flags.append(FLAGS[self.signature.status])
        return flags

    @property
    def files_text(self) -> str:
        return "dynamic" if self.entry.is_dynamic else str(len(self.entry.files))

    @property
    def size_text(self) -> str:
        return "-" if self.entry.is_dynamic else human_size(self.entry.total_size)


def rows_of(listing: Listing, keys: tuple[TrustedKey, ...] = (), origin: str | None = None) -> list[Row]:
    counts = Counter(entry.name for entry in listing.entries)
    return [Row(entry, counts[entry.name] > 1, signature_check(entry, keys, origin)) for entry in listing.entries]


def collisions_of(listing: Listing) -> dict[str, list[str]]:
    by_name: dict[str, list[str]] = {}
    for entry in listing.entries:
        by_name.setdefault(entry.name, []).append(entry.uri)
    return {name: uris for name, uris in by_name.items() if len(uris) > 1}


def one_line(text: str) -> str:
    return printable(" ".join(text.split()))


def cut(text: str, width: int) -> str:
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: max(0, width - 3)] + "..."


def to_json(origin: str, listing: Listing, rows: list[Row]) -> dict[str, Any]:
    return {
        "origin": origin,
        "skills": [
            {
                "uri": row.entry.uri,
                "name": row.entry.name,
                "description": row.entry.description,
                "files": None if row.entry.is_dynamic else len(row.entry.files),
                "size": None if row.entry.is_dynamic else row.entry.total_size,
                "dynamic": row.entry.is_dynamic,
                "collision": row.collision,
                "over_limits": row.entry.limit_problem(),
                "source": None if (source := provenance_of(row.entry)) is None else source.to_json(),
                "signature": signature_json(row.signature),
            }
            for row in rows
        ],
        "collisions": [{"name": name, "uris": uris} for name, uris in collisions_of(listing).items()],
        "malformed": [{"page": p.page, "index": p.index, "uri": p.uri, "reason": p.reason} for p in listing.problems],
        "pages": listing.pages,
        "stopped_early": listing.stopped_early,
    }


def layout(rows: list[Row], width: int | None) -> list[tuple[list[str], str]]:
    """The header and one line per row: padded cells, then the description cut to what `width` leaves."""
    cells = [
        [printable(r.entry.name), r.files_text, r.size_text, ",".join(r.flags) or "-", printable(r.entry.uri)]
        for r in rows
    ]
    widths = [max(len(HEADERS[i]), *(len(c[i]) for c in cells)) for i in range(5)]
    right = {1, 2}  # numbers line up on the right
    head_width = sum(widths) + 2 * 5
    lines = []
    for values, description in [(list(HEADERS[:5]), HEADERS[5])] + [
        (c, one_line(r.entry.description)) for c, r in zip(cells, rows, strict=True)
    ]:
        padded = [v.rjust(widths[i]) if i in right else v.ljust(widths[i]) for i, v in enumerate(values)]
        lines.append((padded, description if width is None else cut(description, width - head_width)))
    return lines


def plain_table(rows: list[Row], width: int | None) -> list[str]:
    """Aligned columns, cells separated by two spaces; `width` None keeps descriptions whole."""
    return [("  ".join(cells) + "  " + description).rstrip() for cells, description in layout(rows, width)]


STYLES = ("bold cyan", "", "", "yellow", "dim")


def terminal_table(rows: list[Row], width: int) -> list[Text]:
    """The same table with colour, for a terminal `width` columns wide."""
    out = []
    for index, (cells, description) in enumerate(layout(rows, width - 1)):
        line = Text(no_wrap=True, overflow="ellipsis")
        for cell, style in zip(cells, STYLES, strict=True):
            line.append(cell, style="bold" if index == 0 else style)
            line.append("  ")
        line.append(description, style="bold" if index == 0 else "")
        line.rstrip()
        out.append(line)
    return out


def report_problems(out: Output, listing: Listing) -> None:
    for name, uris in collisions_of(listing).items():
        out.warn(f"collision: {len(uris)} skills are named {printable(name)!r}: {printable(', '.join(uris))}")
    for p in listing.problems:
        where = printable(p.uri) if p.uri else f"page {p.page}, entry {p.index}"
        out.warn(f"malformed entry skipped: {where}: {printable(p.reason)}")
    if listing.stopped_early:
        out.warn(f"the listing may be incomplete: {printable(listing.stopped_early)}")


def run(args: argparse.Namespace) -> int:
    target = server_target(args)
    out = Output(quiet=args.quiet, json_mode=args.json)

    async def body(client: SkillsClient) -> Listing:
        return await client.list_skills()

    try:
        listing = run_client(target, body)
    except SkillwireError as exc:
        return report_failure(out, args, exc)
    keys = trusted_keys(out)
    rows = rows_of(listing, keys, args.origin)
    note = origin_note([row.signature for row in rows], keys, args.origin)
    if args.json:
        origin = args.origin or target.label
        out.write(json.dumps(to_json(origin, listing, rows), indent=2, ensure_ascii=False) + "\n")
        if note is not None:
            out.warn(note)
        return 0
    if not out.quiet:
        if not rows:
            out.warn(
                "no skills listed (a listing may be partial: `skillwire get URI` still fetches a skill by its uri)"
            )
        elif out.is_terminal:
            for line in terminal_table(rows, out.width):
                out.console.print(line)
        else:
            columns = os.environ.get("COLUMNS", "")
            width = int(columns) if columns.isdigit() else None  # piped: cut only to an explicit $COLUMNS
            out.write("\n".join(plain_table(rows, width)) + "\n")
    report_problems(out, listing)
    if note is not None:
        out.warn(note)
    return 0
