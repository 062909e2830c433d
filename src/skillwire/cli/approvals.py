"""`skillwire approvals [revoke LABEL URI]`: list the bridge's approvals, or revoke one.

The store is the one `skillwire approve` writes and the bridge reads: `--approvals FILE`, else the one
the bridge's configuration file names, else the default beside it.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC
from pathlib import Path
from typing import Any

from skillwire.bridge.config import bridge_approvals_path, default_config_path, read_config_file
from skillwire.cli.args import UsageError, add_debug_argument, add_output_arguments
from skillwire.cli.output import Output, printable
from skillwire.cli.upstreams import add_config_argument
from skillwire.core.errors import BridgeConfigError
from skillwire.core.manifest import human_size
from skillwire.host.approvals import Approval, ApprovalStore
from skillwire.host.identity import SkillRef


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "approvals",
        help="list the bridge's approvals, or revoke one",
        description="`skillwire approvals` lists them; `skillwire approvals revoke LABEL URI` removes one.",
    )
    p.add_argument("words", nargs="*", metavar="revoke LABEL URI", help="revoke one approval")
    add_config_argument(p)
    p.add_argument("--approvals", type=Path, metavar="FILE", help="the bridge's approval store")
    add_output_arguments(p, quiet=False)
    add_debug_argument(p)
    p.set_defaults(run=run_approvals)


def _store_path(args: argparse.Namespace) -> Path:
    if args.approvals is not None:
        return Path(args.approvals).expanduser().resolve()
    config_file = args.config if args.config is not None else default_config_path()
    if args.config is not None or config_file.is_file():
        try:
            _, approvals = read_config_file(config_file)
        except BridgeConfigError as exc:
            raise UsageError(str(exc)) from None
        if approvals is not None:
            return approvals
    return bridge_approvals_path()


def _as_json(approval: Approval) -> dict[str, Any]:
    return {
        "server": approval.ref.origin,
        "uri": approval.ref.uri,
        "manifestHash": approval.manifest_hash,
        "files": [f.to_wire() for f in approval.files],
        "totalSize": sum(f.size for f in approval.files),
        "allowedTools": approval.allowed_tools,
        "approvedAt": approval.approved_at.astimezone(UTC).isoformat(),
    }


def run_approvals(args: argparse.Namespace) -> int:
    out = Output(json_mode=args.json)
    path = _store_path(args)
    words = list(args.words)
    if words and words[0] == "revoke":
        if len(words) != 3:
            raise UsageError("write: skillwire approvals revoke LABEL URI")
        try:
            ref = SkillRef(words[1], words[2])
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        with ApprovalStore(path) as store:
            if not store.revoke(ref):
                out.error(f"skillwire: no approval for {ref} in {path}")
                return 1
        out.print(f"Revoked {ref.uri} from {ref.origin!r}; the bridge will ask again.")
        return 0
    if words:
        raise UsageError(f"unknown approvals action {words[0]!r}; use `skillwire approvals` or `... revoke LABEL URI`")
    with ApprovalStore(path) as store:
        approvals = store.list()
    if args.json:
        out.write(json.dumps({"store": str(path), "approvals": [_as_json(a) for a in approvals]}, indent=2) + "\n")
        return 0
    if not approvals:
        out.print(f"No approvals in {path}.")
        return 0
    out.print(f"{len(approvals)} approval(s) in {path}:")
    for approval in approvals:
        size = human_size(sum(f.size for f in approval.files))
        tools = f"allowed-tools granted: {printable(approval.allowed_tools)}" if approval.allowed_tools else "no tools"
        when = approval.approved_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        out.print(f"{approval.ref.origin}  {printable(approval.ref.uri)}")
        files = f"{len(approval.files)} files, {size}, {approval.manifest_hash}"
        out.print(f"    bound to {files}; {tools}; approved {when}")
    return 0
