"""`skillwire pull [URI ...] --to DIR SERVER`: a verified copy of skills on disk, with a `skills.lock`.

Argument parsing and output only; the engine (layout, verified download, crash-safe swap and repair,
the lock, the comparisons) is `skillwire.host.mirror`. For each chosen skill (every listed skill when
none is named) its entry comes from the listing, or `skills/get` for a named one; each file is checked
for size and digest (SKILL.md also field by field) before anything of the skill is written, and a skill
replaces `DIR/<skill-path>` only when all of it verified. A crash is repaired by the next `pull` (the
old copy is put back before anything else). A skill that fails is reported and skipped, nothing of it
is written, and the others are still pulled; the exit code is then 1.

Layout: `DIR/<skill-path segments, decoded>/<file path>`, so `skill://acme/billing/refunds/SKILL.md`
lands in `DIR/acme/billing/refunds/SKILL.md`, and `skillwire serve DIR` publishes the same URIs
again (for the `skill://` scheme). The lock is `DIR/skills.lock` (see `skillwire.host.mirror.lock`).

`pull --check --to DIR SERVER` reads no file from the server: it compares the lock with the server's
entries and prints what changed, in the words `pull --for HOST --check` uses (`host/mirror/drift.py`
`CheckStatus`: `changed upstream` with the files added, removed, changed; `gone upstream`; `new`), and
checks the copies on disk against the lock (`missing`, `edited locally`, e.g. after an interrupted pull,
or `added locally`: files the lock does not list), exit code 1 when anything differs. A locked publisher signature is
judged by the trust policy a host applies (`--origin LABEL` names the label a host gives this server,
for keys scoped to origins). It writes nothing.

A server answering from a published index names it in `skills/list` (id and sequence); the lock records
it (`skillwire.host.mirror.lock`), and a later pull from a server serving a lower sequence is refused in
one line naming both, exit code 1, nothing written (a rolled-back pointer, a replica left behind);
`--allow-older` takes it and says so. `--check` reports it the same way. A pull that names skills by URI
reads no listing unless the lock records an index (then one listing, to be held to it).
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from skillwire.cli.args import (
    UsageError,
    add_debug_argument,
    add_header_argument,
    add_output_arguments,
    add_timeout_argument,
    server_target,
)
from skillwire.cli.connect import run_client
from skillwire.cli.hostsync import add_sync_arguments, run_sync, status_line
from skillwire.cli.output import Output, printable, report_failure
from skillwire.cli.resolve import is_uri, skill_md_uri
from skillwire.cli.signed import trusted_keys
from skillwire.client.skills import SkillsClient
from skillwire.core.errors import LockError, MirrorTargetError, SkillwireError
from skillwire.core.manifest import human_size
from skillwire.host.identity import validate_origin_label
from skillwire.host.mirror.drift import Change
from skillwire.host.mirror.lock import LOCK_NAME
from skillwire.host.mirror.puller import LockCheck, Puller, check_lock, existing_lock
from skillwire.host.mirror.writer import Outcome


class _IntermixedParser(argparse.ArgumentParser):
    """Lets options sit between the URIs and the server: `pull URI... --to DIR URL`."""

    _intermixing = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._intermixing:
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "pull",
        usage=(
            "%(prog)s [URI ...] (--to DIR | --for HOST [--project DIR] [--prune] [--yes]) [--check] "
            "[--header NAME:VALUE] [--timeout SECONDS] [--json] [--quiet] (URL | -- COMMAND ARGS)"
        ),
        help="copy skills to a directory, verified, with a skills.lock",
        description=(
            "Copy skills from a server into DIR, verifying every file against the skill's manifest "
            "(size, digest, and SKILL.md's frontmatter) before it is written, and record origin and digests "
            "in DIR/skills.lock. With no URI, every listed skill is pulled. --check compares the lock with "
            "the server instead (exit code 1 when anything changed). --for HOST syncs into that host's own "
            "skills folder (claude, codex, copilot, cursor, gemini, agents; yours, or --project DIR's): each skill is "
            "a load, so it "
            "needs your approval and passes the trust policy first; only folders skillwire wrote are ever replaced or "
            "removed (--prune), and --check reports drift."
        ),
    )
    p.__class__ = _IntermixedParser
    p.add_argument(
        "items",
        nargs="*",
        metavar="URI",
        help="skills to pull (SKILL.md or root URIs, or unique names; default: all), then the server's URL "
        "(or `-- COMMAND ARGS` at the very end)",
    )
    p.add_argument("--to", metavar="DIR", type=Path, help="directory to write into (or --for HOST)")
    p.add_argument("--check", action="store_true", help="compare DIR/skills.lock with the server; write nothing")
    p.add_argument(
        "--allow-older",
        action="store_true",
        help="pull even when the server serves an older published index than DIR/skills.lock records",
    )
    add_header_argument(p)
    p.add_argument(
        "--origin",
        metavar="LABEL",
        type=_origin_label,
        help="the label a host gives this server (as in `skillwire bridge --server LABEL=URL`): trusted keys scoped "
        "to origins count under it (--check), and --for keeps approvals under it (default: from the URL)",
    )
    add_sync_arguments(p)
    add_timeout_argument(p)
    add_output_arguments(p)
    add_debug_argument(p)
    p.set_defaults(run=run)


def _origin_label(text: str) -> str:
    try:
        return validate_origin_label(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def split_items(args: argparse.Namespace) -> list[str]:
    """The named skills; sets `args.server` from the last item unless the server is `-- COMMAND`."""
    items = list(args.items)
    args.server = None
    if not getattr(args, "stdio_command", None) and items and items[-1].startswith(("http://", "https://")):
        args.server = items.pop()
    return items


# -- pull -----------------------------------------------------------------------------------------------------------


def _can_handle_signals() -> bool:
    """Signal handlers can only be installed from the main thread (tests may call `main` elsewhere)."""
    return threading.current_thread() is threading.main_thread()


def _open_puller(args: argparse.Namespace, refs: list[str], origin: str) -> Puller:
    try:
        return Puller.open(args.to.expanduser(), str(args.to), origin, refs, allow_older=args.allow_older)
    except (LockError, MirrorTargetError) as exc:
        raise UsageError(str(exc)) from None


def pull(args: argparse.Namespace, refs: list[str], out: Output) -> int:
    target = server_target(args)
    shown_dest = str(args.to)
    refs = [skill_md_uri(ref) if is_uri(ref) else ref for ref in refs]
    puller = _open_puller(args, refs, target.label)
    interrupted = False
    streamed: set[int] = set()  # outcomes (by id) whose result line was written as they were pulled

    def warn_all() -> None:
        for line in puller.warnings:
            out.warn(printable(line))
        puller.warnings.clear()

    warn_all()

    async def body(client: SkillsClient) -> None:
        plans = await puller.plan(client)
        warn_all()
        if not plans:
            return
        progress = out.progress("pulling", sum(len(p.files) for p in plans))
        # Progress is for a terminal only (the bar on stderr). In a pipe nothing is said twice: each skill's
        # result line goes to stdout as soon as it is pulled, so a log still shows how far a long pull got,
        # and stderr carries only warnings and errors.
        stream_results = progress is None and not out.quiet and not out.json_mode

        def pulled(outcome: Outcome) -> None:
            if stream_results:
                out.write(_pulled_line(outcome, shown_dest) + "\n")
                streamed.add(id(outcome))

        if progress is None:
            await puller.write(client, plans, pulled=pulled)
            return
        with progress as bar:
            await puller.write(
                client,
                plans,
                advance=lambda steps: bar.advance(bar.task_ids[0], steps),
                describe=lambda name: bar.update(bar.task_ids[0], description=f"pulling {printable(name)}"),
                pulled=pulled,
            )

    async def interruptible(client: SkillsClient) -> None:
        # Ctrl-C cancels the pull at its next await: a skill being fetched is dropped with its
        # staging directory, while a skill being swapped in (no await between the renames and the
        # lock write) completes, so the folder and skills.lock always agree. A second Ctrl-C is the
        # ordinary KeyboardInterrupt.
        nonlocal interrupted
        async with anyio.create_task_group() as group:

            async def on_interrupt() -> None:
                nonlocal interrupted
                with anyio.open_signal_receiver(signal.SIGINT) as signals:
                    async for _ in signals:
                        interrupted = True
                        group.cancel_scope.cancel()
                        return

            if _can_handle_signals():
                group.start_soon(on_interrupt)
            await body(client)
            group.cancel_scope.cancel()

    try:
        run_client(target, interruptible)
    except MirrorTargetError as exc:
        raise UsageError(str(exc)) from None
    except SkillwireError as exc:
        return report_failure(out, args, exc)
    except KeyboardInterrupt:
        interrupted = True
    if interrupted:
        if puller.planned:
            out.error(f"skillwire: interrupted: {puller.pulled} of {puller.planned} skills pulled; run again to finish")
        else:
            out.error("skillwire: interrupted before any skill was pulled; nothing was written")
        return 130
    if puller.refused is not None:
        out.error(f"skillwire: {puller.refused}: refusing to go back; nothing was written (--allow-older pulls it)")
        return 1
    puller.finish()
    for note in puller.notes:
        out.warn(f"warning: {printable(note)}")
    return report(out, puller.outcomes, shown_dest, target.label, streamed)


def _pulled_line(o: Outcome, shown_dest: str) -> str:
    return (
        f"pulled {printable(o.uri)} -> {shown_dest.rstrip('/')}/{printable(o.path or '')} "
        f"({o.files} file{'' if o.files == 1 else 's'}, {human_size(o.size)})"
    )


def report(out: Output, outcomes: list[Outcome], shown_dest: str, origin: str, streamed: set[int] | None = None) -> int:
    """The result on stdout (each pulled skill's line, unless already written as it was pulled, then the
    summary); failures and skips on stderr."""
    for o in outcomes:  # the reasons may quote the server
        o.error = printable(o.error) if o.error is not None else None
    pulled = [o for o in outcomes if o.status == "pulled"]
    failed = [o for o in outcomes if o.status == "failed"]
    skipped = [o for o in outcomes if o.status == "skipped"]
    lock_file = f"{shown_dest.rstrip('/')}/{LOCK_NAME}"
    if out.json_mode:
        data = {
            "origin": origin,
            "to": shown_dest,
            "lock": lock_file if pulled else None,
            "ok": not failed,
            "skills": [o.to_json() for o in outcomes],
        }
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    for o in failed:
        out.error(f"skillwire: failed {printable(o.uri)}: {o.error}")
    if out.json_mode:
        return 1 if failed else 0
    for o in skipped:
        out.warn(f"skipped {printable(o.uri)}: {o.error}")
    if not out.quiet:
        lines = [_pulled_line(o, shown_dest) for o in pulled if id(o) not in (streamed or ())]
        total = len(outcomes)
        summary = f"pulled {len(pulled)} of {total} skills into {shown_dest}"
        if pulled:
            summary += f" (lock: {lock_file})"
        extra = [f"{len(failed)} failed"] if failed else []
        extra += [f"{len(skipped)} skipped"] if skipped else []
        if extra:
            summary += "; " + ", ".join(extra)
        out.write("\n".join([*lines, summary]) + "\n")
    return 1 if failed else 0


# -- check ---------------------------------------------------------------------------------------------------------


def check(args: argparse.Namespace, refs: list[str], out: Output) -> int:
    if refs:
        raise UsageError("--check compares every skill in skills.lock; drop the URIs")
    target = server_target(args)
    dest: Path = args.to.expanduser()
    try:
        lock = existing_lock(dest, str(args.to))
    except (LockError, MirrorTargetError) as exc:
        raise UsageError(str(exc)) from None
    if lock is None:
        raise UsageError(f"no {LOCK_NAME} in {args.to}; run `skillwire pull --to {args.to} SERVER` first")
    if lock.origin != target.label:
        out.warn(f"note: {args.to}/{LOCK_NAME} was pulled from {lock.origin}; comparing with {target.label}")
    keys = trusted_keys(out)

    async def body(client: SkillsClient) -> LockCheck:
        return await check_lock(client, dest, str(args.to), lock, keys, args.origin)

    try:
        found = run_client(target, body)
    except SkillwireError as exc:
        return report_failure(out, args, exc)
    for note in found.notes:
        out.warn(note)
    changes = found.changes
    for c in changes:  # the notes may quote the server
        c.note = printable(c.note) if c.note is not None else None
    if out.json_mode:
        data = {
            "origin": target.label,
            "lock_origin": lock.origin,
            "to": str(args.to),
            "changed": found.differs,
            "index": {
                "locked": lock.index.to_json() if lock.index is not None else None,
                "served": found.served.to_json() if found.served is not None else None,
                "older": found.older,
            },
            "skills": [c.to_json() for c in changes],
        }
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    elif not out.quiet:
        lines = check_lines(changes, len(lock.skills))
        if found.older_line is not None:
            lines = [status_line("older", found.older_line), *lines[:-1], lines[-1].replace("in step: ", "skills: ")]
        out.write("\n".join(lines) + "\n")
    if found.older_line is not None and out.quiet:
        out.error(f"skillwire: {found.older_line}")
    return 1 if found.differs else 0


def check_lines(changes: list[Change], locked: int) -> list[str]:
    lines: list[str] = []
    for c in changes:
        lines.append(status_line(c.status, printable(c.uri), c.note))
        lines += [f"  added    {printable(p)}" for p in c.added]
        lines += [f"  removed  {printable(p)}" for p in c.removed]
        lines += [f"  changed  {printable(p)}" for p in c.changed]
    differ = sum(1 for c in changes if c.status != "in step")
    if differ:
        lines.append(f"{differ} of {len(changes)} skills differ from {LOCK_NAME}")
    else:
        lines.append(f"in step: all {locked} skills in {LOCK_NAME} match the server and the disk")
    return lines


_SYNC_ONLY = {
    "--project": "project",
    "--prune": "prune",
    "--force": "force",
    "--yes": "yes",
    "--approvals": "approvals",
}


def run(args: argparse.Namespace) -> int:
    refs = split_items(args)
    out = Output(quiet=args.quiet, json_mode=args.json)
    if args.host is not None:
        if args.allow_older:
            raise UsageError("--allow-older goes with --to DIR (skills.lock records the published index)")
        return run_sync(args, refs, out)
    sync_only = [flag for flag, given in _SYNC_ONLY.items() if getattr(args, given)]
    if sync_only:
        raise UsageError(f"{sync_only[0]} goes with --for HOST (syncing into a host's skills folder)")
    if args.to is None:
        raise UsageError("say where to write: --to DIR, or --for HOST to sync into a host's own skills folder")
    if args.check:
        return check(args, refs, out)
    return pull(args, refs, out)
