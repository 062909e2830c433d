"""`skillwire sign PATH... --key KEY`: sign every skill those folders would serve.

The scan is `skillwire serve`'s own (same roots syntax, ignore rules, limits, skips), so what is signed is
exactly what is served. Each folder gets its `.skillwire-signatures.json` (catalog/signatures.py), which
`serve` reads back. The key is an SSH key as `ssh-keygen -Y sign` takes it: a private key file, or a
public key file whose private half is in `ssh-agent`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.signatures import sign_entries, write_signatures
from skillwire.cli.args import UsageError
from skillwire.cli.roots import parse_roots


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "sign",
        help="sign the skills of folders with an SSH key (publisher signatures)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="skill folders, as `skillwire serve` takes them")
    p.add_argument(
        "--key", type=Path, required=True, help="SSH private key, or public key with the private in ssh-agent"
    )
    p.add_argument("--no-limits", action="store_true", help="as `serve --no-limits`")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    roots = parse_roots(args.paths)
    if not args.key.is_file():
        raise UsageError(f"no such key file: {args.key}")
    total = 0
    for root in roots:
        snapshot = SkillCatalog([root], digest_cache=DigestCache(), enforce_limits=not args.no_limits).snapshot
        for skipped in snapshot.skipped:
            print(f"skillwire: not signed (not served): {skipped.location}: {skipped.reason}", file=sys.stderr)
        entries = [skill.entry for skill in snapshot.skill_by_uri.values()]
        signed = sign_entries(entries, args.key)
        path = write_signatures(root.path, signed)
        total += len(signed)
        print(f"skillwire: signed {len(signed)} skills of {root.path} -> {path}", file=sys.stderr)
    return 0 if total else 1
