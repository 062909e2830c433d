"""`skillwire approve LABEL URI`: approve a skill for the bridge by hand (`approvals.py` lists and revokes).

For hosts that cannot ask the person through MCP elicitation, the bridge's refusal names the exact
`skillwire approve` command. It connects to that upstream (from the bridge's configuration), fetches
the current entry with `skills/get`, shows what would be approved (files, sizes, `allowed-tools`),
asks on a terminal (or takes `--yes`), and stores the approval bound to exactly that file set in the
bridge's own approval store. A later change to any file revokes it, and the bridge asks again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from skillwire.cli.args import ServerTarget, UsageError, add_debug_argument
from skillwire.cli.connect import ClientError, run_session
from skillwire.cli.output import Output, printable
from skillwire.cli.upstreams import add_upstream_arguments, config_from_args, trust_from_args
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidSkillURI
from skillwire.core.manifest import human_size, manifest_hash
from skillwire.host.approvals import ApprovalStore
from skillwire.host.identity import SkillRef
from skillwire.host.origins import ServerOrigin
from skillwire.host.trust import bound_files


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "approve",
        help="approve a skill for skillwire bridge (for hosts that cannot ask)",
        description=(
            "Fetch the current entry of skill URI from the bridge upstream LABEL, show what it contains, and "
            "approve loading it through the bridge, bound to exactly these files."
        ),
    )
    add_upstream_arguments(p)
    p.add_argument("label", metavar="LABEL", help="the upstream's label, as the bridge shows it")
    p.add_argument("uri", metavar="URI", help="the skill's SKILL.md URI, as list_skills shows it")
    p.add_argument("--yes", "-y", action="store_true", help="approve without asking (loading only)")
    p.add_argument(
        "--grant-allowed-tools", action="store_true", help="with --yes: also grant the skill's allowed-tools"
    )
    add_debug_argument(p)
    p.set_defaults(run=run_approve)


# -- approve ---------------------------------------------------------------------------------------------------


def _fetch_entry(origin: ServerOrigin, uri: str) -> SkillEntry:
    async def fetch() -> SkillEntry:
        async with origin.connect() as skills:
            return await skills.get_skill(uri)

    return run_session(ServerTarget(origin.url, origin.command, origin.headers), fetch)


def _show(out: Output, label: str, entry: SkillEntry, store: Path) -> None:
    out.print(f"Skill {printable(entry.name)!r} from server {label!r}")
    out.print(f"  uri:          {printable(entry.uri)}")
    out.print(f"  description:  {printable(entry.description[:300])}")
    out.print(f"  contents:     {len(entry.files)} files, {human_size(entry.total_size)} in all")
    for file in entry.files:
        out.print(f"    {printable(file.uri)}  {human_size(file.size)}")
    tools = entry.frontmatter.get("allowed-tools")
    out.print(f"  allowed-tools: {printable(str(tools)) if isinstance(tools, str) and tools.strip() else '(none)'}")
    out.print(f"  fingerprint:  {manifest_hash(entry.files)}")
    out.print(f"  store:        {store}")


def _ask(question: str) -> bool:
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def run_approve(args: argparse.Namespace) -> int:
    out = Output()
    config = config_from_args(args)
    label, uri = args.label, args.uri
    origin = config.server(label)
    if origin is None:
        if any(local.label == label for local in config.local):
            raise UsageError(f"{label!r} is a local folder; local skills load without approval")
        known = ", ".join(config.labels())
        raise UsageError(f"the bridge has no upstream labelled {label!r} (it has: {known})")
    try:
        ref = SkillRef(label, uri)
    except InvalidSkillURI as exc:
        raise UsageError(f"{uri!r} is not a skill URI: {exc}") from None
    entry = _fetch_entry(origin, uri)
    if entry.is_dynamic:
        raise ClientError(f"{uri}: the skill's content is dynamic (no digests); it cannot be approved once for all")
    problem = entry.limit_problem()
    if problem is not None:
        raise ClientError(f"{uri}: the bridge will not load it: the skill {problem}")
    signature = trust_from_args(args).inspect(ref, entry)
    if signature.error is not None and args.trust == "require":
        raise ClientError(f"the bridge will not load it: {signature.error}")
    bound = bound_files(entry, signature)  # as the bridge binds it: the files, and the verified signer
    _show(out, label, entry, config.approvals)
    if signature.status != "not checked":
        out.print(f"  publisher:    {signature.describe()}")
    tools = entry.frontmatter.get("allowed-tools")
    wants_tools = isinstance(tools, str) and bool(tools.strip())
    with ApprovalStore(config.approvals) as store:
        current = store.get(ref)
        if current is not None and current.manifest_hash == manifest_hash(bound):
            out.print("Already approved for exactly these files.")
            return 0
        if args.yes:
            grant = wants_tools and args.grant_allowed_tools
        elif sys.stdin.isatty():
            if not _ask("Approve loading this skill through skillwire bridge?"):
                out.print("Not approved.")
                return 1
            grant = wants_tools and _ask(f"Also grant its allowed-tools ({printable(str(tools))})?")
        else:
            raise UsageError("not a terminal, so nobody can answer: add --yes to approve without asking")
        store.approve(ref, bound, allowed_tools=str(tools) if grant else None)
    out.print(f"Approved {uri} from {label!r}" + (" with its allowed-tools." if grant else "."))
    return 0
