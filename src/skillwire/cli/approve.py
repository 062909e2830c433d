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

from skillwire.bridge.approval import BridgePolicy
from skillwire.cli.args import ServerTarget, UsageError, add_debug_argument, trust_from_args
from skillwire.cli.connect import ClientError, run_session
from skillwire.cli.output import Output, printable
from skillwire.cli.upstreams import add_upstream_arguments, config_from_args
from skillwire.core.display import quoted
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidSkillURI
from skillwire.core.manifest import human_size, manifest_hash
from skillwire.host.approvals import ApprovalStore
from skillwire.host.identity import SkillRef
from skillwire.host.load import Approved, Refused, plan_load
from skillwire.host.origins import ServerOrigin


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
    # Every quoted field is the server's own text, one line each (core/display.py): a name, description or
    # allowed-tools holding line breaks cannot write a line of this command's own (a fake "publisher:").
    out.print(f"Skill from server {label!r} (quoted fields are the server's own text):")
    out.print(f"  name:          {quoted(entry.name, 200)}")
    out.print(f"  uri:           {quoted(entry.uri, 500)}")
    out.print(f"  description:   {quoted(entry.description, 300)}")
    out.print(f"  contents:      {len(entry.files)} files, {human_size(entry.total_size)} in all")
    for file in entry.files:
        out.print(f"    {quoted(file.uri, 500)}  {human_size(file.size)}")
    tools = entry.frontmatter.get("allowed-tools")
    out.print(f"  allowed-tools: {quoted(tools) if isinstance(tools, str) and tools.strip() else '(none)'}")
    out.print(f"  fingerprint:   {manifest_hash(entry.files)}")
    out.print(f"  store:         {printable(str(store))}")


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
    with ApprovalStore(config.approvals) as store:
        # The bridge's own decision (host/load.py): the same steps, so this command approves exactly what the
        # bridge would ask about, bound as the bridge binds it (the files, and the verified signer).
        plan = plan_load(
            ref, entry, allow_dynamic=BridgePolicy.allow_dynamic, trust=trust_from_args(args), approvals=store.get
        )
        if isinstance(plan, Refused):
            raise ClientError(_refusal(uri, plan))
        _show(out, label, entry, config.approvals)
        if plan.signature.status != "not checked":
            out.print(f"  publisher:     {plan.signature.describe()}  (checked by this host)")
        if isinstance(plan, Approved):
            out.print("Already approved for exactly these files.")
            return 0
        tools = plan.allowed_tools
        if args.yes:
            grant = tools is not None and args.grant_allowed_tools
        elif sys.stdin.isatty():
            if not _ask("Approve loading this skill through skillwire bridge?"):
                out.print("Not approved.")
                return 1
            grant = tools is not None and _ask(f"Also grant its allowed-tools (from the server: {quoted(tools)})?")
        else:
            raise UsageError("not a terminal, so nobody can answer: add --yes to approve without asking")
        store.approve(ref, plan.bound, allowed_tools=tools if grant else None)
    out.print(f"Approved {uri} from {label!r}" + (" with its allowed-tools." if grant else "."))
    return 0


def _refusal(uri: str, plan: Refused) -> str:
    """Why the bridge would refuse this load whatever the person says, in this command's words."""
    if plan.step == "dynamic":
        return f"{uri}: {plan.reason}; it cannot be approved once for all"
    if plan.step == "limits":
        return f"{uri}: the bridge will not load it: {plan.reason}"
    return f"the bridge will not load it: {plan.reason}"
