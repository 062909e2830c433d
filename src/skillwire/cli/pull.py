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
entries and prints what changed (files added, removed, changed; skills removed or new), and checks
the copies on disk against the lock (a skill whose folder or files are missing or altered, e.g. by an
interrupted pull, is `damaged`), exit code 1 when anything differs. A locked publisher signature is
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
import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
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
from skillwire.cli.hostsync import add_sync_arguments, run_sync
from skillwire.cli.output import Output, printable, report_failure
from skillwire.cli.resolve import is_uri, resolve_entry, skill_md_uri
from skillwire.cli.signed import trusted_keys
from skillwire.client.skills import Listing, SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidResponse, LockError, ServerError, SkillNotFound, SkillwireError
from skillwire.core.manifest import human_size
from skillwire.core.published_index import PublishedIndex
from skillwire.host.discovery import is_inside_discovery_path
from skillwire.host.identity import validate_origin_label
from skillwire.host.mirror.drift import Change, check_disk, check_signatures, lock_changes
from skillwire.host.mirror.layout import Plan, plan_entries
from skillwire.host.mirror.lock import LOCK_NAME, Lock, index_verdict, older_index_line, read_lock, write_lock
from skillwire.host.mirror.swap import recover_interrupted
from skillwire.host.mirror.writer import Mirror, Outcome


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


def _discovery_warning(path: Path, shown: str) -> str | None:
    root = is_inside_discovery_path(Path(os.path.abspath(path)))
    if root is None:
        return None
    return (
        f"warning: {shown} is inside {root}, where agent hosts discover skills: what is pulled there becomes a "
        "local skill, loaded without its MCP origin or verification (`--for HOST` syncs into a host's folder "
        "with your approval, the trust policy and an ownership record)"
    )


def served_index(listing: Listing, origin: str | None) -> PublishedIndex | None:
    """The published index a listing came from (its `skills/list` `_meta`); `InvalidResponse` for a claim that
    is garbage (one line: `Listing.index_problem` quotes nothing the server sent)."""
    if listing.index_problem is not None:
        raise InvalidResponse(f"skills/list: {listing.index_problem}", origin=origin)
    return listing.index


def _older_line(lock: Lock, served: PublishedIndex | None, older: bool, shown_dir: str) -> str | None:
    """The one line naming both indexes when the served one goes back from the one `lock` records (pull and
    pull --check say it alike), else None."""
    if not older or served is None or lock.index is None:
        return None
    return older_index_line(served, lock.index, f"{shown_dir.rstrip('/')}/{LOCK_NAME}")


async def _choose(
    client: SkillsClient, refs: list[str], listing: Listing | None = None
) -> tuple[list[SkillEntry], list[Outcome], list[str]]:
    """The entries to pull, the ones that failed before planning, and warnings; with no refs, from `listing`
    when given (the one whose index was judged: a second listing could come from another replica)."""
    entries: list[SkillEntry] = []
    failed: list[Outcome] = []
    warnings: list[str] = []
    if refs:
        for ref in refs:
            try:
                entries.append(await resolve_entry(client, ref))
            except (SkillNotFound, ServerError) as exc:
                failed.append(Outcome(skill_md_uri(ref) if is_uri(ref) else ref, "failed", error=str(exc)))
    else:
        listing = listing if listing is not None else await client.list_skills()
        entries = list(listing.entries)
        for problem in listing.problems:
            where = problem.uri or f"page {problem.page}, entry {problem.index}"
            failed.append(Outcome(where, "failed", error=f"malformed entry: {problem.reason}"))
        if listing.stopped_early:
            warnings.append(f"warning: the listing may be incomplete ({listing.stopped_early})")
        if not entries and not listing.problems:
            warnings.append("warning: the server listed no skills (name one by URI to pull it with skills/get)")
    unique: dict[str, SkillEntry] = {}
    for entry in entries:
        unique.setdefault(entry.uri, entry)
    return list(unique.values()), failed, warnings


def _make_directory(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)


def _read_lock(dest: Path) -> Lock | None:
    try:
        return read_lock(dest) if dest.is_dir() else None
    except LockError as exc:
        raise UsageError(str(exc)) from None


@dataclass
class _PullState:
    planned: int = 0
    pulled: int = 0
    interrupted: bool = False
    refused: str | None = None  # the server's index is older than the lock's: nothing was written


def _can_handle_signals() -> bool:
    """Signal handlers can only be installed from the main thread (tests may call `main` elsewhere)."""
    return threading.current_thread() is threading.main_thread()


def pull(args: argparse.Namespace, refs: list[str], out: Output) -> int:
    target = server_target(args)
    dest: Path = args.to.expanduser()
    shown_dest = str(args.to)
    if dest.exists() and not dest.is_dir():
        raise UsageError(f"--to {shown_dest} is not a directory")
    for ref in refs:
        if is_uri(ref):
            skill_md_uri(ref)
    lock = _read_lock(dest)
    if lock is not None and lock.origin != target.label:
        raise UsageError(
            f"{shown_dest} holds skills pulled from {lock.origin} ({LOCK_NAME}); pull from that server, "
            "or into another directory"
        )
    existed = lock is not None
    lock = lock or Lock(target.label)
    if not refs:
        lock.selection = "all"
    for note in recover_interrupted(dest):
        out.warn(f"note: {printable(note)}")
    warning = _discovery_warning(dest, shown_dest)
    if warning:
        out.warn(warning)

    outcomes: list[Outcome] = []
    puller_notes: list[str] = []
    streamed: set[int] = set()  # outcomes (by id) whose result line was written as they were pulled

    async def body(client: SkillsClient) -> None:
        listing = None
        if not refs or lock.index is not None:
            listing = await client.list_skills()
            served = served_index(listing, client.origin)
            verdict = index_verdict(lock.index, served, allow_older=args.allow_older, now=time.time())
            if verdict.dropped is not None:
                out.warn(f"note: {shown_dest.rstrip('/')}/{LOCK_NAME}: {verdict.dropped}")
            line = _older_line(lock, served, verdict.older, shown_dest)
            if line is not None:
                if verdict.refused:
                    state.refused = (
                        f"skillwire: {line}: refusing to go back; nothing was written (--allow-older pulls it)"
                    )
                    return
                out.warn(f"note: {line}; pulling it, as --allow-older asks")
            lock.index = verdict.record
        entries, failed, warnings = await _choose(client, refs, listing)
        outcomes.extend(failed)
        for text in warnings:
            out.warn(text)
        plans: list[Plan] = []
        warned_roots = {warning} if warning else set()
        for planned in plan_entries(entries):
            if not isinstance(planned, Plan):
                skip = planned.dynamic and not refs  # pulling everything: a dynamic skill is skipped, not failed
                outcomes.append(Outcome(planned.entry.uri, "skipped" if skip else "failed", error=planned.reason))
                continue
            inner_warning = _discovery_warning(dest.joinpath(*planned.segments), f"{shown_dest}/{planned.path}")
            if inner_warning and not warning and inner_warning not in warned_roots:
                warned_roots.add(inner_warning)
                out.warn(inner_warning)
            plans.append(planned)
        if not plans:
            return
        state.planned = len(plans)
        _make_directory(dest)
        progress = out.progress("pulling", sum(len(p.files) for p in plans))
        # Progress is for a terminal only (the bar on stderr). In a pipe nothing is said twice: each skill's
        # result line goes to stdout as soon as it is pulled, so a log still shows how far a long pull got,
        # and stderr carries only warnings and errors.
        stream_results = progress is None and not out.quiet and not out.json_mode
        with progress if progress is not None else contextlib.nullcontext():
            puller = Mirror(client, dest, shown_dest, lock)
            if progress is not None:
                bar = progress
                puller.advance = lambda steps: bar.advance(bar.task_ids[0], steps)
                puller.describe = lambda name: bar.update(bar.task_ids[0], description=f"pulling {printable(name)}")
            try:
                for plan in plans:
                    outcome = await puller.pull(plan)
                    outcomes.append(outcome)
                    if outcome.status == "pulled":
                        state.pulled += 1
                    if stream_results and outcome.status == "pulled":
                        out.write(_pulled_line(outcome, shown_dest) + "\n")
                        streamed.add(id(outcome))
            finally:
                puller_notes.extend(puller.notes)

    async def interruptible(client: SkillsClient) -> None:
        # Ctrl-C cancels the pull at its next await: a skill being fetched is dropped with its
        # staging directory, while a skill being swapped in (no await between the renames and the
        # lock write) completes, so the folder and skills.lock always agree. A second Ctrl-C is the
        # ordinary KeyboardInterrupt.
        async with anyio.create_task_group() as group:

            async def on_interrupt() -> None:
                with anyio.open_signal_receiver(signal.SIGINT) as signals:
                    async for _ in signals:
                        state.interrupted = True
                        group.cancel_scope.cancel()
                        return

            if _can_handle_signals():
                group.start_soon(on_interrupt)
            await body(client)
            group.cancel_scope.cancel()

    state = _PullState()
    try:
        run_client(target, interruptible)
    except SkillwireError as exc:
        return report_failure(out, args, exc)
    except KeyboardInterrupt:
        state.interrupted = True
    if state.interrupted:
        if state.planned:
            out.error(f"skillwire: interrupted: {state.pulled} of {state.planned} skills pulled; run again to finish")
        else:
            out.error("skillwire: interrupted before any skill was pulled; nothing was written")
        return 130
    if state.refused is not None:
        out.error(state.refused)
        return 1
    if existed and not any(o.status == "pulled" for o in outcomes) and dest.is_dir():
        write_lock(dest, lock)  # the selection may have changed
    for note in puller_notes:
        out.warn(f"warning: {printable(note)}")
    return report(out, outcomes, shown_dest, target.label, streamed)


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
    lock = _read_lock(dest)
    if lock is None:
        raise UsageError(f"no {LOCK_NAME} in {args.to}; run `skillwire pull --to {args.to} SERVER` first")
    if lock.origin != target.label:
        out.warn(f"note: {args.to}/{LOCK_NAME} was pulled from {lock.origin}; comparing with {target.label}")

    async def body(client: SkillsClient) -> tuple[list[Change], PublishedIndex | None]:
        changes = await lock_changes(client, lock)
        # With selection `all` this listing is the one lock_changes just read (reused for the server's ttlMs).
        return changes, (served_index(await client.list_skills(), client.origin) if lock.index is not None else None)

    try:
        changes, served = run_client(target, body)
    except SkillwireError as exc:
        return report_failure(out, args, exc)
    older = index_verdict(lock.index, served, allow_older=False, now=time.time()).older
    older_line = _older_line(lock, served, older, str(args.to))
    for note in check_disk(dest, str(args.to), lock, changes):  # the lock is only honest if the disk agrees
        out.warn(note)
    check_signatures(dest, lock, changes, trusted_keys(out), args.origin)
    for c in changes:  # the notes may quote the server
        c.note = printable(c.note) if c.note is not None else None
    differ = [c for c in changes if c.status != "unchanged"]
    if out.json_mode:
        data = {
            "origin": target.label,
            "lock_origin": lock.origin,
            "to": str(args.to),
            "changed": bool(differ) or older,
            "index": {
                "locked": lock.index.to_json() if lock.index is not None else None,
                "served": served.to_json() if served is not None else None,
                "older": older,
            },
            "skills": [c.to_json() for c in changes],
        }
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    elif not out.quiet:
        lines = check_lines(changes, len(lock.skills))
        if older_line is not None:
            lines = [f"older     {older_line}", *lines[:-1], lines[-1].replace("up to date: ", "skills: ")]
        out.write("\n".join(lines) + "\n")
    if older_line is not None and out.quiet:
        out.error(f"skillwire: {older_line}")
    return 1 if differ or older else 0


def check_lines(changes: list[Change], locked: int) -> list[str]:
    lines: list[str] = []
    for c in changes:
        head = f"{c.status:<9} {printable(c.uri)}"
        lines.append(head + (f"  ({c.note})" if c.note else ""))
        lines += [f"  added    {printable(p)}" for p in c.added]
        lines += [f"  removed  {printable(p)}" for p in c.removed]
        lines += [f"  changed  {printable(p)}" for p in c.changed]
    differ = sum(1 for c in changes if c.status != "unchanged")
    if differ:
        lines.append(f"{differ} of {len(changes)} skills differ from {LOCK_NAME}")
    else:
        lines.append(f"up to date: all {locked} skills in {LOCK_NAME} match the server and the disk")
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
