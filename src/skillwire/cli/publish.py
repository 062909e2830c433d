"""`skillwire publish PATH... s3://BUCKET/PREFIX` (or `file://DIR`): a catalog onto object storage.

The folders are scanned with exactly the rules `skillwire serve` applies; see `catalog.published` for
what is written and in which order. Credentials, endpoint and region come from the standard AWS
environment (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, and
`AWS_ALLOW_HTTP=true` for a plain-HTTP endpoint).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import anyio

from skillwire.cli.args import UsageError, add_audience_argument, add_output_arguments


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "publish",
        help="publish skill folders to object storage (s3:// or file://)",
        description=(
            "Scan PATH... (folders, or git roots git+URL@REF#SUBDIR) with the rules `skillwire serve` applies "
            "and publish the catalog to TARGET "
            "(s3://BUCKET/PREFIX or file://DIR): files content-addressed by SHA-256, one index, and a "
            "pointer switched last. Re-publishing uploads only what is not there yet. Serve the result "
            "with `skillwire serve TARGET`. PATH may be written PATH=PREFIX or PATH=SCHEME://PREFIX."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="skill folders, then the target")
    p.add_argument("--no-limits", action="store_true", help="publish skills over 512 files / 16 MiB anyway")
    add_audience_argument(p)
    add_output_arguments(p, json=False)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from skillwire.catalog.audiences import audience_rules, parse_audience_rule
    from skillwire.catalog.digests import DigestCache
    from skillwire.catalog.filesystem import SkillRoot
    from skillwire.catalog.published import publish, scan_for_publish
    from skillwire.catalog.signatures import SIGNATURES_FILE, SignatureBook
    from skillwire.catalog.store import is_store_url, parse_location
    from skillwire.cli.roots import git_catalog, has_git_root, parse_root_specs

    if len(args.paths) < 2 or not is_store_url(args.paths[-1]):
        raise UsageError("publish wants PATH... TARGET, the target last: s3://BUCKET/PREFIX or file://DIR")
    location = parse_location(args.paths[-1])
    rules = audience_rules(parse_audience_rule(rule) for rule in args.audience)
    if has_git_root(args.paths[:-1]):
        # Fetched and read from git's objects first; each entry then records its repository and commit in the index.
        catalog = git_catalog(
            parse_root_specs(args.paths[:-1]), digest_cache=DigestCache(), enforce_limits=not args.no_limits
        )
        roots = catalog.folder_roots()  # a git root has no folder: its tree is read from git's objects
        snapshot = catalog.snapshot
        if not args.quiet:
            for root, commit in catalog.commits().items():
                print(f"skillwire: {root} is commit {commit}", file=sys.stderr)
    else:
        roots = [SkillRoot.parse(p) for p in args.paths[:-1]]
        snapshot = scan_for_publish(roots, enforce_limits=not args.no_limits)
    # Each folder's publisher signatures (`skillwire sign`) go into the index with the entries they cover.
    signatures = SignatureBook.load(root.path / SIGNATURES_FILE for root in roots)
    if has_git_root(args.paths[:-1]):
        catalog.add_signatures(signatures)  # each git tree's committed signatures file
    result = anyio.run(lambda: publish(snapshot, location, audiences=rules, signatures=signatures))
    if not args.quiet:
        print(result.summary(), file=sys.stderr, flush=True)
        for skipped in result.skipped:
            print(f"  - {skipped.location}: {skipped.reason}", file=sys.stderr)
    return 0
