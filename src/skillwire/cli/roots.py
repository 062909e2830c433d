"""The roots a command line names (`serve`, `publish`, `sign`, `lint` and the bridge's `--local` take the
same ones, so they sign, lint and publish exactly what is served): folders, each of which must exist and be
a folder before anything is scanned, and git repositories at a ref (`git+URL@REF#SUBDIR`, see
`catalog/git.py`), each fetched and checked out before anything is scanned."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.git import GitError, as_git_root, is_bare_repository, is_git_spec
from skillwire.catalog.git_catalog import GitCatalog, GitRootSpec, parse_root
from skillwire.cli.args import UsageError
from skillwire.core.errors import SkillwireError

if TYPE_CHECKING:
    from skillwire.server.options import ServeOptions


def parse_roots(paths: list[str]) -> list[SkillRoot]:
    """The folders to serve; a path that does not exist or is not a folder is a `UsageError`."""
    return [_folder(spec) for spec in paths]


def _folder(spec: str) -> SkillRoot:
    try:
        root = SkillRoot.parse(spec)
    except SkillwireError as exc:
        raise UsageError(f"cannot serve {spec!r}: {exc}") from None
    if not root.path.exists():
        raise UsageError(f"no such folder: {root.path}")
    if not root.path.is_dir():
        raise UsageError(f"not a folder: {root.path} (serve the folder that holds your skill folders)")
    if is_bare_repository(root.path):
        raise UsageError(
            f"{root.path} is a bare git repository, not a folder of skills: "
            f"serve {as_git_root(root.path)}[@BRANCH][#SUBDIR] to serve its commits"
        )
    return root


def has_git_root(paths: Sequence[str]) -> bool:
    return any(is_git_spec(spec) for spec in paths)


def parse_root_specs(paths: Sequence[str]) -> list[SkillRoot | GitRootSpec]:
    """Folders (checked as `parse_roots` does) and git roots (parsed; nothing fetched yet)."""
    roots: list[SkillRoot | GitRootSpec] = []
    for spec in paths:
        if not is_git_spec(spec):
            roots.append(_folder(spec))
            continue
        try:
            parsed = parse_root(spec)
        except SkillwireError as exc:
            # Not the spec as typed: it may hold a password, and the message already names the root.
            raise UsageError(f"cannot serve a git root: {exc}") from None
        roots.append(parsed)
    return roots


def git_catalog(
    specs: Sequence[SkillRoot | GitRootSpec],
    *,
    poll_seconds: float = 0.0,
    trusted_commit_keys: Sequence[str] | None = None,
    **options: object,
) -> GitCatalog:
    """A catalog over these roots with every git root fetched and checked out; a repository, ref or
    commit that cannot be served is one line (a `UsageError`, exit 2)."""
    catalog = GitCatalog(specs, poll_seconds=poll_seconds, trusted_commit_keys=trusted_commit_keys, **options)  # type: ignore[arg-type]
    try:
        catalog.load()
    except GitError as exc:
        raise UsageError(str(exc)) from None
    return catalog


def checked_out(spec: str) -> tuple[Path, GitCatalog]:
    """A single git root checked out once (no following): the tree's folder, for commands that read
    a folder (`lint`, the bridge's `--local`)."""
    catalog = git_catalog(parse_root_specs([spec]))
    return catalog.roots[0].path, catalog


def trusted_commit_keys(trust_file: Path | None) -> list[str]:
    """The public keys of `skillwire trust` (or `trust_file`): the keys a served commit may be signed by."""
    from skillwire.host.trust import TrustStore

    try:
        keys = TrustStore(trust_file).trusted_keys()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not keys:
        where = trust_file or TrustStore().path
        raise UsageError(f"--require-signed-commit: no trusted keys in {where}; add one with `skillwire trust add`")
    return [key.public_key for key in keys]


def serve_git_catalog(args: argparse.Namespace, options: ServeOptions, paths: Sequence[str]) -> GitCatalog:
    """`serve`'s catalog when a root is a git repository: fetched before serving, following its branch
    every `--poll` seconds and only forward (`--accept-older-commit` lifts that), its blobs' digests
    cached by blob id in the digest cache (no snapshot cache: listing a commit's tree is cheap)."""
    import logging

    from skillwire.catalog.digests import DigestCache

    if not args.quiet:
        logging.getLogger("skillwire.git").setLevel(logging.INFO)  # say when a new commit is served
    keys = trusted_commit_keys(args.trust_file) if args.require_signed_commit else None
    digests = options.digest_cache_file()
    return git_catalog(
        parse_root_specs(paths),
        poll_seconds=options.poll_seconds,
        trusted_commit_keys=keys,
        rollback_rule=True,  # a followed branch only moves forward, remembered in the cache across restarts
        accept_older_commit=args.accept_older_commit,
        digest_cache=DigestCache(digests) if digests is not None else DigestCache(),
        enforce_limits=options.enforce_limits,
        cursor_secret=options.secret(),
    )
