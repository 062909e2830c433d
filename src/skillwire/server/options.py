"""`ServeOptions`: what `skillwire serve` decides beyond parsing its command line, for embedders too.

Where the caches live (the digest cache in the user cache directory or at a given file, the snapshot
cache beside it), which cursor secret the replicas share, whether callers get per-caller views, and
the SDK's bearer-token settings for `--tokens`. The command parses its flags into a `ServeOptions`
and prints; a program serving skills its own way builds the same catalog and the same server with it:

    options = ServeOptions(tokens=Path("tokens.json"), audiences=("acme/=acme",))
    catalog = options.catalog([SkillRoot.parse("skills"), GitRootSpec.parse("git+https://example.com/s.git@main")])
    served = options.extension(catalog, base_url="http://127.0.0.1:8765")
    server = served.server()        # an MCPServer; run it with serve_http(server, served.extension, ...)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.git_catalog import GitCatalog, GitRootSource, GitRootSpec, add_tree_signatures
from skillwire.catalog.listing import ListingRules
from skillwire.catalog.signatures import SIGNATURES_FILE, SignatureBook
from skillwire.catalog.store import StoreLocation
from skillwire.core.cursor import DEFAULT_CURSOR_SECRET
from skillwire.core.errors import InvalidListingRule
from skillwire.server.extension import DEFAULT_PAGE_SIZE, SkillsExtension

__all__ = ["ServeOptions", "ServedSkills"]

# Replicas behind one load balancer must share it: a cursor one replica issued is checked by another.
CURSOR_SECRET_ENV = "SKILLWIRE_CURSOR_SECRET"


def http_base_url(host: str, port: int) -> str:
    """`http://HOST:PORT` with an IPv6 host in brackets."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


@dataclass(frozen=True)
class ServedSkills:
    """The extension to serve and, for bearer tokens, the SDK's verifier and auth settings."""

    extension: SkillsExtension
    token_verifier: TokenVerifier | None = None
    auth: AuthSettings | None = None
    metrics: bool = True  # ServeOptions.metrics: pass it on to `serve_http` too (the /metrics route)

    def server(self, name: str = "skillwire", *, log_requests: bool = False) -> MCPServer:
        from skillwire.server.app import build_server

        return build_server(
            self.extension,
            name=name,
            token_verifier=self.token_verifier,
            auth=self.auth,
            log_requests=log_requests,
            metrics=self.metrics,
        )


@dataclass(frozen=True)
class ServeOptions:
    """Settings of a skills server. The defaults are `skillwire serve`'s.

    `digest_cache`: the SQLite digest cache file; None puts it in the user cache directory.
    `persist_digests` False hashes every file at start-up and keeps no snapshot cache either.
    `snapshot_cache`: serve the last run's snapshot at once, checked against the disk afterwards;
    its file is `<digest cache>.snapshot-<hash of the roots and settings>`, so deleting the digest
    cache files deletes it, and each set of roots has its own.
    `cursor_secret`: None reads `$SKILLWIRE_CURSOR_SECRET`, else the built-in default (fine for one
    replica; replicas behind one load balancer need one shared secret).
    `tokens`: a `StaticTokens` JSON file; callers then need a bearer token (HTTP only).
    `audiences`: `PREFIX=AUD[,AUD]` rules; with tokens or rules (or rules a published index declares)
    each caller is answered from its own view (`server.visibility`).
    `listing`: which skills `skills/list` lists (`--list` / `--unlist`, `catalog/listing.py`); the rest are served
    unlisted. A published catalog lists what its publisher chose (`InvalidListingRule` here).
    `signature_files`: publisher signatures besides each root's own `SIGNATURES_FILE`.
    `metrics`: False serves no `/metrics` and counts no request (no request middleware, no byte count):
    for an operator who scrapes nothing (`--no-metrics`); request logging still works.
    `replica_state`: where a replica of a published catalog remembers the highest index sequence it
    accepted (None: a file per location under the user state directory); `accept_older_index` takes
    the pointer's index even when it is numbered below that (a deliberate roll back).
    `search_tool`: offer the `find_skills` tool (`server/search_tool.py`); its index lives in
    `search_index`, or (None) in `search/serve-<hash of the sources>.sqlite` beside the digest cache,
    in memory when digests are not persisted.
    `trusted_commit_keys`: OpenSSH public key lines; when given, a git root's commit is served only when
    signed by one of them. A followed branch only moves forward, also across restarts;
    `accept_older_commit` takes an older commit or another history on purpose.
    """

    directory_read: bool = True
    page_size: int = DEFAULT_PAGE_SIZE
    ttl_ms: int = 60_000
    cache_scope: Literal["private", "public"] = "private"
    enforce_limits: bool = True
    digest_cache: Path | None = None
    persist_digests: bool = True
    snapshot_cache: bool = True
    poll_seconds: float = 30.0
    blob_cache_bytes: int = 64 * 1024 * 1024
    cursor_secret: bytes | None = None
    tokens: Path | None = None
    audiences: Sequence[str] = ()
    listing: ListingRules = field(default_factory=ListingRules)
    signature_files: Sequence[Path] = ()
    metrics: bool = True
    replica_state: Path | None = None
    accept_older_index: bool = False
    search_tool: bool = True
    search_index: Path | None = None
    trusted_commit_keys: Sequence[str] | None = None
    accept_older_commit: bool = False

    def secret(self) -> bytes:
        if self.cursor_secret is not None:
            return self.cursor_secret
        return os.environ.get(CURSOR_SECRET_ENV, "").encode() or DEFAULT_CURSOR_SECRET

    def digest_cache_file(self) -> Path | None:
        """Where the digest cache lives, or None when it is kept in memory only."""
        if not self.persist_digests:
            return None
        if self.digest_cache is not None:
            return self.digest_cache
        import platformdirs

        return Path(platformdirs.user_cache_dir("skillwire")) / "digests.sqlite"

    def catalog(self, roots: Sequence[SkillRoot | GitRootSpec | StoreLocation]) -> SkillCatalog:
        """The catalog of any mix of folders and git roots (in order: a later root's overlapping skill is
        skipped), or of one published location alone. Git roots are fetched here (`GitError`, one line, when
        one cannot be served), a published index is read here (`StoreError`); no folder is scanned yet."""
        locations = [root for root in roots if isinstance(root, StoreLocation)]
        if locations:
            if len(roots) != 1:
                raise ValueError(
                    "serve one published catalog (s3://BUCKET/PREFIX or file://DIR) and no folders beside it"
                )
            return self.published_catalog(str(locations[0]))
        local = [root for root in roots if not isinstance(root, StoreLocation)]
        if any(isinstance(root, GitRootSpec) for root in local):
            return self.git_catalog(local)
        return self.folder_catalog([root for root in local if isinstance(root, SkillRoot)])

    def git_catalog(self, roots: Sequence[SkillRoot | GitRootSpec]) -> GitCatalog:
        """Folders and git roots, each git root fetched now and followed every `poll_seconds`, only forward;
        its blobs' digests cached by blob id in the digest cache (no snapshot cache: listing a commit's tree
        is cheap)."""
        digests = self.digest_cache_file()
        catalog = GitCatalog(
            roots,
            poll_seconds=self.poll_seconds,
            trusted_commit_keys=self.trusted_commit_keys,
            rollback_rule=True,  # a followed branch only moves forward, remembered in the cache across restarts
            accept_older_commit=self.accept_older_commit,
            digest_cache=DigestCache(digests) if digests is not None else DigestCache(),
            enforce_limits=self.enforce_limits,
            cursor_secret=self.secret(),
            listing=self.listing,
        )
        catalog.load()
        return catalog

    def folder_catalog(self, roots: Sequence[SkillRoot]) -> SkillCatalog:
        """The catalog of skill folders, with the digest and snapshot caches placed as documented above."""
        roots = list(roots)
        limits = self.enforce_limits
        digests = self.digest_cache_file()
        if digests is None:
            return SkillCatalog(
                roots,
                digest_cache=DigestCache(),
                enforce_limits=limits,
                cursor_secret=self.secret(),
                listing=self.listing,
            )
        store = None
        if self.snapshot_cache:
            from skillwire.catalog.persist import SnapshotStore, snapshot_file_name

            store = SnapshotStore(digests.with_name(snapshot_file_name(digests.name, roots, limits)))
        return SkillCatalog(
            roots,
            digest_cache=DigestCache(digests),
            enforce_limits=limits,
            cursor_secret=self.secret(),
            snapshot_store=store,
            listing=self.listing,
        )

    def published_catalog(self, location: str) -> SkillCatalog:
        """A published catalog (`s3://BUCKET/PREFIX` or `file://DIR`), its first index loaded: without
        it there is nothing to serve, so a store that cannot be read fails here."""
        from skillwire.catalog.published import PublishedCatalog
        from skillwire.catalog.store import parse_location

        if self.listing:
            raise InvalidListingRule(
                "a published catalog lists what its publisher chose (skillwire publish --list/--unlist), so every "
                "replica lists alike; a replica takes no listing rules"
            )
        catalog = PublishedCatalog(
            location,
            poll_seconds=self.poll_seconds,
            cache_bytes=self.blob_cache_bytes,
            cursor_secret=self.secret(),
            replica_state=self.replica_state_file(str(parse_location(location))),
            accept_older=self.accept_older_index,
        )
        catalog.refresh()
        return catalog

    def replica_state_file(self, location: str) -> Path:
        """The replica's state file for `location`: the one given, or one per location (named by a hash of
        it) under the user state directory, so every replica of one catalog on this machine shares it."""
        if self.replica_state is not None:
            return self.replica_state
        import hashlib

        import platformdirs

        name = hashlib.sha256(location.encode()).hexdigest()[:24]
        return platformdirs.user_state_path("skillwire") / "replicas" / f"{name}.json"

    def signature_book(self, roots: Sequence[SkillRoot] = ()) -> SignatureBook:
        """The `signature_files` (`--signatures FILE`, URIs as served, any root), after checking that each
        root's own `SIGNATURES_FILE` reads; raises `SigningError`. A root's file is not in the book: the
        catalog's scan of that root applies it to that root's entries (`catalog/signatures.RootSignatures`)."""
        SignatureBook.load(root.path / SIGNATURES_FILE for root in roots)
        return SignatureBook.load(self.signature_files)

    def search_index_file(self, sources: str) -> Path | None:
        """Where the search tool's index of the catalog served from `sources` lives (None: in memory)."""
        if self.search_index is not None:
            return self.search_index
        digests = self.digest_cache_file()
        if digests is None:
            return None
        from skillwire.server.search_tool import default_index_file

        return default_index_file(digests.parent, sources)

    def catalog_signatures(self, catalog: SkillCatalog) -> SignatureBook:
        """`signature_book` of the catalog's folders (their own files are checked; the catalog's scan applies
        them), and each git root's own committed signatures file."""
        book = self.signature_book(catalog.roots)
        for source in catalog.sources:
            if isinstance(source, GitRootSource) and source.tree is not None:
                add_tree_signatures(book, source.tree)
        return book

    def extension_options(self, signatures: SignatureBook | None = None, sources: str = "") -> dict[str, Any]:
        return {
            "directory_read": self.directory_read,
            "page_size": self.page_size,
            "ttl_ms": self.ttl_ms,
            "cache_scope": self.cache_scope,
            "signatures": signatures or None,
            "search_tool": self.search_tool,
            "search_index": self.search_index_file(sources) if self.search_tool else None,
        }

    def extension(
        self,
        catalog: SkillCatalog,
        *,
        base_url: str | None = None,
        signatures: SignatureBook | None = None,
        sources: str = "",
    ) -> ServedSkills:
        """The extension for `catalog`: per-caller views when tokens or audience rules (given here or
        declared by the catalog's snapshot) exist, and the SDK auth settings when `tokens` is set.

        `base_url` is the server's own `http://HOST:PORT` (`http_base_url`), needed with `tokens`; a
        stdio server has no bearer tokens (ValueError). Raises `InvalidAudienceRule` for a bad rule
        or tokens file. `sources` names what is served (the command line's paths), for the search index file."""
        from skillwire.catalog.audiences import audience_rules, parse_audience_rule

        options = self.extension_options(signatures, sources)
        rules = audience_rules(parse_audience_rule(rule) for rule in self.audiences)
        # Only a catalog that can declare rules is asked for its snapshot: a folder catalog's first scan is
        # not run here, so a stdio server answers its handshake before that scan ends (cli/serve.py).
        declared = bool(getattr(catalog.snapshot, "audience_rules", ())) if catalog.declares_audiences else False
        if not (self.tokens or rules or declared):
            return ServedSkills(SkillsExtension(catalog, **options), metrics=self.metrics)
        from skillwire.server.visibility import PerCallerSkills, StaticTokens

        skills = PerCallerSkills(catalog, rules=rules or None, **options)
        if self.tokens is None:
            return ServedSkills(skills, metrics=self.metrics)
        if base_url is None:
            raise ValueError("bearer tokens need HTTP: a stdio server has no bearer tokens")
        # A resource server only: tokens are verified here, issued elsewhere (or listed in the file).
        auth = AuthSettings.model_validate(
            {"issuer_url": base_url, "resource_server_url": f"{base_url}/mcp", "validate_token_resource": False}
        )
        return ServedSkills(skills, StaticTokens.from_file(self.tokens), auth, metrics=self.metrics)
