"""The roots a command line names (`serve`, `publish`, `sign`, `lint` and the bridge's `--local` take the
same ones, so they sign, lint and publish exactly what is served): folders, each of which must exist and be
a folder before anything is scanned, and git repositories at a ref (`git+URL@REF#SUBDIR`, see
`catalog/git.py`), each fetched before anything is scanned and read from git's objects (never checked out).
Only parsing: `ServeOptions.catalog` builds what `serve` serves from them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.git import GitError, as_git_root, is_bare_repository, is_git_spec
from skillwire.catalog.git_catalog import GitCatalog, GitRootSpec, parse_root
from skillwire.catalog.store import StoreLocation, is_store_url, parse_location
from skillwire.cli.args import UsageError
from skillwire.core.errors import SkillwireError


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


def parse_sources(paths: Sequence[str]) -> list[SkillRoot | GitRootSpec | StoreLocation]:
    """What `serve` takes: folders and git roots (`parse_root_specs`), or one published location."""
    if any(is_store_url(p) for p in paths):
        if len(paths) != 1:
            raise UsageError("serve one published catalog (s3://BUCKET/PREFIX or file://DIR) and no folders beside it")
        return [parse_location(paths[0])]
    return [*parse_root_specs(paths)]


def git_catalog(
    specs: Sequence[SkillRoot | GitRootSpec],
    *,
    poll_seconds: float = 0.0,
    trusted_commit_keys: Sequence[str] | None = None,
    **options: object,
) -> GitCatalog:
    """A catalog over these roots with every git root fetched and its tree listed; a repository, ref or
    commit that cannot be served is one line (a `UsageError`, exit 2)."""
    catalog = GitCatalog(specs, poll_seconds=poll_seconds, trusted_commit_keys=trusted_commit_keys, **options)  # type: ignore[arg-type]
    try:
        catalog.load()
    except GitError as exc:
        raise UsageError(str(exc)) from None
    return catalog


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
