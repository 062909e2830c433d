"""`skillwire pull URL --for HOST [--project DIR]`: the command-line half of syncing into a host's skills folder.

The library is `skillwire.host.mirror`: `select.select_entries` (which skills), `sync.HostSync.run`
(ownership record, load decision, crash-safe writes, the person's files kept, prune) and `sync.check`
(`--check`); the folders are `host.mirror.hostdirs`. This module parses what `pull` was given for it,
asks the person on a terminal, and prints (`status_line` is the one line format of both `--check`s).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import anyio

from skillwire.bridge.config import bridge_approvals_path
from skillwire.cli.args import ServerTarget, UsageError, add_trust_arguments, server_target, trust_from_args
from skillwire.cli.connect import run_client
from skillwire.cli.output import Output, printable, report_failure
from skillwire.cli.resolve import is_uri, skill_md_uri
from skillwire.client.skills import SkillsClient
from skillwire.core.errors import ApprovalStoreError, LockError, SkillwireError
from skillwire.core.manifest import human_size
from skillwire.host.approvals import ApprovalStore
from skillwire.host.identity import default_label
from skillwire.host.load import Ask
from skillwire.host.mirror.drift import STATUS_WIDTH
from skillwire.host.mirror.hostdirs import HOST_FOLDERS
from skillwire.host.mirror.select import select_entries
from skillwire.host.mirror.sync import (
    AskPerson,
    HostSync,
    SyncCheck,
    SyncOutcome,
    SyncRecord,
    approve_every,
    ask_nobody,
    read_record,
    settle,
)
from skillwire.host.mirror.sync import check as check_sync


def add_sync_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--for",
        dest="host",
        choices=sorted(HOST_FOLDERS),
        help="sync into this host's own skills folder instead of --to: "
        + ", ".join(
            f"{p.host} ~/{p.user}" + (f" (DIR/{p.project} with --project)" if p.project != p.user else "")
            for p in HOST_FOLDERS.values()
        )
        + "; with --project DIR, the same folder under DIR",
    )
    p.add_argument("--project", type=Path, metavar="DIR", help="with --for: the project's folder, not your home's")
    p.add_argument(
        "--prune", action="store_true", help="with --for: remove skills skillwire synced that the server dropped"
    )
    p.add_argument("--force", action="store_true", help="with --for: replace or prune synced skills edited locally")
    p.add_argument("--yes", "-y", action="store_true", help="with --for: approve every skill without asking")
    p.add_argument(
        "--approvals",
        type=Path,
        metavar="FILE",
        help=f"with --for: the approval store (default: the bridge's, {bridge_approvals_path()})",
    )
    add_trust_arguments(p, qualifier="with --for: ")


def status_line(status: str, what: str, note: str | None = None) -> str:
    """One line of either `--check` (`pull --check`, `pull --for HOST --check`): the status in one column."""
    return f"{status:<{STATUS_WIDTH}} {what}" + (f"  ({note})" if note else "")


def _question(decision: Ask, shown_folder: str) -> str:
    request, entry = decision.request, decision.request.entry
    lines = [
        f"Sync skill {printable(entry.name)!r} from server {request.ref.origin!r} into {shown_folder}?",
        f"  uri:          {printable(entry.uri)}",
        f"  description (from the server): {printable(entry.description[:300])!r}",
        f"  contents:     {len(entry.files)} files, {human_size(entry.total_size)}",
    ]
    if decision.signature.status != "not checked":
        lines.append(f"  publisher:    {printable(decision.signature.describe())}")
    if decision.changed is not None:
        lines.append(f"  changed since you approved it: {printable(decision.changed.describe())}")
    lines.append("  Once synced, the host loads it as its own skill, without asking again.")
    return "\n".join(lines)


def _asker(out: Output, shown: str, *, yes: bool, interactive: bool) -> AskPerson:
    """The answer a sync gets when a skill needs an approval: the library's `approve_every` with --yes and
    `ask_nobody` when no one can answer (not a terminal); only a person at a terminal is asked from here, so
    the library calls back into cli/ only then."""
    if yes:
        return approve_every
    if not interactive:
        return ask_nobody

    async def ask(decision: Ask) -> bool:
        out.err_console.print(_question(decision, shown), markup=False, highlight=False)

        def read() -> bool:
            sys.stderr.write("Approve? [y/N] ")
            sys.stderr.flush()
            return sys.stdin.readline().strip().lower() in ("y", "yes")

        return await anyio.to_thread.run_sync(read)

    return ask


def run_sync(args: argparse.Namespace, refs: list[str], out: Output) -> int:
    if args.to is not None:
        raise UsageError("--for writes into the host's own skills folder; drop --to (or drop --for)")
    if args.prune and refs:
        raise UsageError("--prune needs the whole listing; drop the URIs")
    target = server_target(args)
    preset = HOST_FOLDERS[args.host]
    project: Path | None = args.project.expanduser() if args.project is not None else None
    if project is not None and not project.is_dir():
        raise UsageError(f"--project {args.project} is not a directory")
    folder = preset.folder(project)
    shown = str(folder)
    label = args.origin or default_label(target.label)
    refs = [skill_md_uri(ref) if is_uri(ref) else ref for ref in refs]
    if args.check:  # writes nothing, so repairs nothing: it reports what the next sync will find
        try:
            return _check(args, target, folder, shown, read_record(folder), out)
        except LockError as exc:
            raise UsageError(str(exc)) from None
    try:
        record, notes = settle(folder)
    except LockError as exc:
        raise UsageError(str(exc)) from None
    for note in notes:
        out.warn(f"note: {printable(note)}")
    trust = trust_from_args(args)
    interactive = sys.stdin.isatty()
    ask = _asker(out, shown, yes=args.yes, interactive=interactive)
    outcomes: list[SyncOutcome] = []
    warnings: list[str] = []

    async def body(client: SkillsClient) -> None:
        selection = await select_entries(client, refs)
        if selection.stopped_early:
            warnings.append(f"the listing may be incomplete ({selection.stopped_early}); nothing is pruned")
        with ApprovalStore(args.approvals or bridge_approvals_path()) as store:
            syncer = HostSync(
                client=client,
                folder=folder,
                shown=shown,
                origin=target.label,
                label=label,
                trust=trust,
                approvals=store,
                ask=ask,
                record=record,
                force=args.force,
            )
            outcomes.extend(await syncer.run(selection, prune=args.prune))
            warnings.extend(syncer.notes)

    try:
        run_client(target, body)
    except (SkillwireError, ApprovalStoreError) as exc:
        return report_failure(out, args, exc)
    for text in warnings:
        out.warn(f"warning: {printable(text)}")
    return _report(out, outcomes, shown, preset.title, target.label, interactive or args.yes)


def _report(out: Output, outcomes: list[SyncOutcome], shown: str, title: str, origin: str, could_ask: bool) -> int:
    for o in outcomes:
        o.reason = printable(o.reason) if o.reason is not None else None
    failed = [o for o in outcomes if o.status == "failed"]
    # In a pipe without --yes a skill that needs an approval cannot get one: the run did not do what was asked,
    # and the fix is on the command line, so it ends as a command-line mistake does (exit 2), not as a sync.
    unapproved = sum(1 for o in outcomes if o.unapproved)
    unasked = not could_ask and unapproved > 0
    no_yes = (
        f"skillwire: not a terminal, so nobody was asked: {unapproved} skill{'' if unapproved == 1 else 's'} "
        "needing your approval not written; add --yes to approve them all (or run it on a terminal)"
    )
    if out.json_mode:
        data = {
            "origin": origin,
            "folder": shown,
            "host": title,
            "ok": not failed,
            "skills": [o.to_json() for o in outcomes],
        }
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        if unasked:
            out.error(no_yes)
        return 1 if failed else 2 if unasked else 0
    for o in failed:
        out.error(f"skillwire: failed {printable(o.uri)}: {o.reason}")
    for o in outcomes:
        if o.status in ("skipped", "kept") and not (unasked and o.unapproved):  # said once, below
            out.warn(f"{o.status} {printable(o.uri)}: {o.reason}")
        elif o.kept:
            folder = f"{shown.rstrip('/')}/{printable(o.folder or '')}"
            listed = ", ".join(printable(p) for p in o.kept[:3]) + (" and more" if len(o.kept) > 3 else "")
            out.warn(
                f"note: {o.status} {printable(o.uri)}, keeping the files skillwire did not write in {folder}: {listed}"
            )
    if unasked:
        out.error(no_yes)
    if not out.quiet:
        lines = [
            f"{o.status} {printable(o.uri)} -> {shown.rstrip('/')}/{printable(o.folder or '')} "
            f"({o.files} file{'' if o.files == 1 else 's'}, {human_size(o.size)})"
            for o in outcomes
            if o.status in ("installed", "updated")
        ]
        lines += [
            f"removed {printable(o.uri)} ({shown.rstrip('/')}/{printable(o.folder or '')})"
            for o in outcomes
            if o.status == "removed"
        ]
        counts = {
            s: sum(1 for o in outcomes if o.status == s)
            for s in ("installed", "updated", "unchanged", "removed", "skipped", "failed")
        }
        summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "nothing to do"
        out.write("\n".join([*lines, f"synced into {shown} for {title}: {summary}"]) + "\n")
    return 1 if failed else 2 if unasked else 0


def _check(
    args: argparse.Namespace, target: ServerTarget, folder: Path, shown: str, record: SyncRecord, out: Output
) -> int:
    async def body(client: SkillsClient) -> SyncCheck:
        return await check_sync(client, folder, record, target.label)

    try:
        checked = run_client(target, body)
    except SkillwireError as exc:
        return report_failure(out, args, exc)
    if checked.interrupted:
        out.warn(f"note: an interrupted sync left work in {shown}; the next sync repairs it first")
    found = checked.found
    for d in found:
        d.note = printable(d.note) if d.note is not None else None
    differ = [d for d in found if d.status not in ("in step", "new")]
    if out.json_mode:
        data = {
            "origin": target.label,
            "folder": shown,
            "drift": checked.differs,
            "skills": [d.to_json() for d in found],
        }
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    elif not out.quiet:
        lines = [status_line(d.status, printable(d.uri), d.note) for d in found]
        synced = sum(1 for d in found if d.status != "new")
        lines.append(
            f"{len(differ)} of {len(found)} skills differ"
            if differ
            else f"in step: all {synced} synced skills in {shown}"
        )
        out.write("\n".join(lines) + "\n")
    return 1 if checked.differs else 0
