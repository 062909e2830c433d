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
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.signatures import SignedRecord, sign_entries, write_signatures
from skillwire.cli.args import UsageError
from skillwire.cli.roots import git_catalog, has_git_root, parse_root_specs, parse_roots


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
    p.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="write every signature to FILE (serve it with --signatures FILE); needed for a git root, "
        "which has no folder to write into (or commit the signatures file to the repository)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.key.is_file():
        raise UsageError(f"no such key file: {args.key}")
    if has_git_root(args.paths):
        if args.out is None:
            raise UsageError(
                "a git root has no folder to write into (it is read from git's objects): give --out FILE "
                "(then serve --signatures FILE), "
                "or sign a clone and commit its .skillwire-signatures.json"
            )
        catalog = git_catalog(
            parse_root_specs(args.paths), digest_cache=DigestCache(), enforce_limits=not args.no_limits
        )
        # One catalog of every root: a git root has no folder, its tree is read from git's objects.
        roots: list[SkillRoot] = []
        snapshots = [catalog.snapshot]
    else:
        limits = not args.no_limits
        roots = parse_roots(args.paths)
        snapshots = [SkillCatalog([root], digest_cache=DigestCache(), enforce_limits=limits).snapshot for root in roots]
    total = 0
    everything: dict[str, SignedRecord] = {}
    for index, snapshot in enumerate(snapshots):
        for skipped in snapshot.skipped:
            print(f"skillwire: not signed (not served): {skipped.location}: {skipped.reason}", file=sys.stderr)
        entries = [skill.entry for skill in snapshot.skill_by_uri.values()]
        signed = sign_entries(entries, args.key)
        total += len(signed)
        if args.out is not None:
            everything.update(signed)
            continue
        path = write_signatures(roots[index].path, signed)
        print(f"skillwire: signed {len(signed)} skills of {roots[index].path} -> {path}", file=sys.stderr)
    if args.out is not None:
        path = write_signatures(args.out.parent, everything, path=args.out)
        print(f"skillwire: signed {total} skills -> {path}", file=sys.stderr)
    return 0 if total else 1
