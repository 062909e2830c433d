"""`skillwire serve [PATH...]`: publish skill folders over Streamable HTTP (default) or stdio."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import logging
import os
import signal
import socket
import sys
import threading
import traceback
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import anyio

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.filesystem import SkillRoot, walk_root
from skillwire.catalog.git import GitError
from skillwire.catalog.listing import ListingRules
from skillwire.catalog.signatures import SIGNATURES_FILE, SignatureBook
from skillwire.catalog.snapshot import CatalogSnapshot
from skillwire.catalog.store import is_store_url
from skillwire.cli.args import (
    INTERRUPTED,
    AtLeast,
    UsageError,
    add_allow_host_argument,
    add_audience_argument,
    add_listing_arguments,
    add_log_arguments,
    add_output_arguments,
    parse_host_port,
    say_failure,
)
from skillwire.cli.roots import has_git_root, parse_root_specs, parse_roots, parse_sources, trusted_commit_keys
from skillwire.core.display import escape
from skillwire.core.errors import BindError, SigningError
from skillwire.core.host_limits import CLAUDE_CODE
from skillwire.core.signing import SIGNATURE_META_KEY
from skillwire.ops.logs import configure_logging, current_format
from skillwire.ops.metrics import multiprocess_directory
from skillwire.server.app import bind_http_socket, event_loop_options, serve_http, serve_stdio
from skillwire.server.extension import DEFAULT_PAGE_SIZE, SkillsExtension
from skillwire.server.options import ServeOptions, http_base_url
from skillwire.server.page_view import ServedPages

DEFAULT_HTTP = "127.0.0.1:8765"
DEFAULT_POLL_SECONDS = 30.0
logger = logging.getLogger("skillwire.serve")
NO_SNAPSHOT_ENV = "SKILLWIRE_SNAPSHOT_CACHE"


def bundled_examples() -> Path:
    return Path(str(resources.files("skillwire") / "examples" / "skills"))


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "serve",
        help="publish skill folders over MCP",
        description=(
            "Publish every skill found under PATH (at any depth) over MCP. PATH may be written "
            "PATH=PREFIX or PATH=SCHEME://PREFIX to publish under a URI prefix. With no PATH, the "
            "bundled example skills are served. A PATH that does not exist, is not a folder, or holds no "
            "SKILL.md is an error (exit 2) unless --allow-empty is given."
        ),
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="skill folders (default: bundled examples)")
    transport = p.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="serve over stdin/stdout")
    transport.add_argument(
        "--http",
        metavar="HOST:PORT",
        default=None,
        help=f"Streamable HTTP (default {DEFAULT_HTTP}; port 0: any free port, named when listening)",
    )
    add_allow_host_argument(p)
    p.add_argument(
        "--page-size",
        type=int,
        action=AtLeast,
        minimum=1,
        default=DEFAULT_PAGE_SIZE,
        help=f"skills per skills/list page (default {DEFAULT_PAGE_SIZE}: TypeScript clients stop after 64 pages)",
    )
    p.add_argument(
        "--ttl-ms",
        type=int,
        action=AtLeast,
        minimum=0,
        default=60_000,
        help="ttlMs on skills/list and skills/get (default 60000)",
    )
    p.add_argument("--cache-scope", choices=["private", "public"], default="private")
    p.add_argument("--no-directory-read", action="store_true", help="do not offer resources/directory/read")
    p.add_argument(
        "--no-search-tool",
        action="store_true",
        help="do not offer the find_skills tool (a model finds skills for a task, listed or not, and loads them "
        "by address)",
    )
    p.add_argument("--no-watch", action="store_true", help="do not reload when files change")
    p.add_argument("--no-limits", action="store_true", help="serve skills over 512 files / 16 MiB anyway")
    cache = p.add_mutually_exclusive_group()
    cache.add_argument("--digest-cache", type=Path, metavar="FILE", help="SQLite digest cache file")
    cache.add_argument(
        "--no-digest-cache", action="store_true", help="hash every file at start-up (no snapshot cache either)"
    )
    p.add_argument(
        "--no-snapshot-cache",
        action="store_true",
        help=f"scan the folders before answering instead of serving the last run's snapshot ({NO_SNAPSHOT_ENV}=0 too)",
    )
    p.add_argument(
        "--allow-empty",
        action="store_true",
        help="serve even when a folder holds no SKILL.md (skills added later appear through the watcher)",
    )
    add_output_arguments(p, json=False)
    p.add_argument(
        "--signatures",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help=f"publisher signatures to attach (default: each folder's {SIGNATURES_FILE}, from `skillwire sign`)",
    )
    store = p.add_argument_group("serving a published catalog (PATH is s3://BUCKET/PREFIX or file://DIR)")
    store.add_argument(
        "--poll",
        type=float,
        action=AtLeast,
        minimum=0,
        default=None,  # DEFAULT_POLL_SECONDS; None says it was not given (`--no-watch` then means no polling)
        metavar="SECONDS",
        help=f"look for a new index, or a new commit of a followed git branch, every SECONDS (0: never; "
        f"default {DEFAULT_POLL_SECONDS:g}); given by name, it polls even with --no-watch",
    )
    git = p.add_argument_group(
        "serving a git repository (PATH is git+https://HOST/REPO@REF#SUBDIR, git+ssh://, git+file://)"
    )
    git.add_argument(
        "--require-signed-commit",
        action="store_true",
        help="serve a commit only if it carries an SSH signature by a key of `skillwire trust`",
    )
    git.add_argument("--trust-file", type=Path, metavar="FILE", help="trusted keys (default: `skillwire trust`'s)")
    git.add_argument(
        "--accept-older-commit",
        action="store_true",
        help="follow a branch to a commit that does not descend from the one served before (a force-push "
        "back to an older commit, or another history); refused without it, across restarts too",
    )
    p.add_argument(
        "--tokens",
        type=Path,
        metavar="FILE",
        help="require a bearer token listed in FILE (JSON); each caller sees what its audiences allow",
    )
    add_audience_argument(p)
    add_listing_arguments(p)
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help=(
            "N server processes on one port (HTTP; default 1); above 1 the legacy 2025-11-25 wire is served "
            "without sessions, so legacy clients get no change notifications"
        ),
    )
    store.add_argument(
        "--blob-cache-mb",
        type=int,
        action=AtLeast,
        minimum=0,
        default=64,
        metavar="MB",
        help="memory for cached file bytes (default 64)",
    )
    store.add_argument(
        "--replica-state",
        type=Path,
        metavar="FILE",
        help="where to remember the highest index sequence accepted (default: one file per catalog in the user "
        "state directory); an index numbered lower is refused, also after a restart",
    )
    store.add_argument(
        "--accept-older-index",
        action="store_true",
        help="serve the index the pointer names even if it is numbered below one already accepted (a roll back)",
    )
    ops = p.add_argument_group("operating it (logs, metrics at /metrics, drain on SIGTERM)")
    add_log_arguments(ops)
    ops.add_argument(
        "--no-ui",
        action="store_true",
        help="serve no catalog web page at / (with --http; /mcp, /metrics and /healthz are unchanged)",
    )
    ops.add_argument(
        "--no-metrics",
        action="store_true",
        help="serve no /metrics and count nothing per request (for a server nobody scrapes)",
    )
    ops.add_argument(
        "--drain-seconds",
        type=float,
        action=AtLeast,
        minimum=0,
        default=0.0,
        metavar="SECONDS",
        help="on SIGTERM, answer /healthz not-ready and keep serving this long before stopping "
        "(behind a load balancer: more than its health-check interval; default 0)",
    )
    ops.add_argument(
        "--grace-seconds",
        type=float,
        action=AtLeast,
        minimum=0,
        default=10.0,
        metavar="SECONDS",
        help="once stopping, how long in-flight requests may take to finish (default 10)",
    )
    p.set_defaults(run=run)


def _is_under(location: str, folder: Path) -> bool:
    top = os.path.abspath(folder)
    here = os.path.abspath(location)
    return here == top or here.startswith(top.rstrip(os.sep) + os.sep)


def nothing_to_serve(roots: list[SkillRoot], snapshot: CatalogSnapshot) -> str | None:
    """Why serving would publish nothing the user meant to publish: a root without any SKILL.md, or no
    skill at all (every one skipped). None when there is something to serve."""
    empty = roots_without_skills(roots, snapshot)
    if empty:
        return no_skill_md_message(empty)
    if not snapshot.skill_by_uri:
        return "nothing to serve: every skill found was skipped (reasons above); --allow-empty serves anyway"
    return None


def no_skill_md_message(empty: list[SkillRoot]) -> str:
    shown = ", ".join(str(root.path) for root in empty)
    return f"no SKILL.md found under {shown} (--allow-empty serves it anyway)"


def roots_without_discovered_skills(roots: list[SkillRoot]) -> list[SkillRoot]:
    """The roots in which the server's discovery rules find no skill folder: a walk, nothing hashed."""
    return [root for root in roots if not walk_root(root).skill_dirs]


def roots_without_skills(roots: list[SkillRoot], snapshot: CatalogSnapshot) -> list[SkillRoot]:
    """The roots under which the scan found no SKILL.md at all (neither served nor skipped)."""
    found = [skill.source for skill in snapshot.skill_by_uri.values()] + [s.location for s in snapshot.skipped]
    return [root for root in roots if not any(_is_under(location, root.path) for location in found)]


def log_summary(snapshot: CatalogSnapshot) -> None:
    """The start-up summary: `summary()`'s lines on a terminal, one JSON event per fact with --log-format json."""
    if current_format() != "json":
        print(summary(snapshot), file=sys.stderr, flush=True)
        return
    logger.info(
        "serving %d skills, %d files",
        len(snapshot.skill_by_uri),
        len(snapshot.files),
        extra={"event": "serving", "skills": len(snapshot.skill_by_uri), "files": len(snapshot.files)},
    )
    for skipped in snapshot.skipped:
        logger.info(
            "skipped %s: %s", skipped.location, skipped.reason, extra={"event": "skip", "skill": skipped.location}
        )
    for path, why in snapshot.ignored:
        logger.info("ignored %s: %s", path, why, extra={"event": "ignored", "path": str(path)})


def say(event: str, message: str, **fields: str | int) -> None:
    """One line of the command's own: `skillwire: message`, or a JSON event with --log-format json."""
    if current_format() == "json":
        logger.info(message, extra={"event": event, **fields})
    else:
        print(f"skillwire: {message}", file=sys.stderr, flush=True)


def signature_counts(
    signatures: SignatureBook, catalog: SkillCatalog, snapshot: CatalogSnapshot
) -> tuple[int, int, list[str]]:
    """Skills served signed (by their root's own file, or a `--signatures FILE`), all skills, and the URIs
    a signature no longer covers (changed since signing)."""
    entries = [skill.entry for skill in snapshot.skill_by_uri.values()]
    signed = sum(
        SIGNATURE_META_KEY in (entry.meta or {}) or signatures.signature_for(entry) is not None for entry in entries
    )
    stale = set(catalog.root_signatures.stale(catalog.roots, snapshot)) | set(signatures.stale(entries))
    return signed, len(entries), sorted(stale)


def watch_signatures(catalog: SkillCatalog, signatures: SignatureBook, snapshot: CatalogSnapshot) -> None:
    """Signature status counts on /metrics, and one log line when a reload changes them."""
    from skillwire.ops.metrics import metrics

    gauge = metrics().signatures
    last = signature_counts(signatures, catalog, snapshot)

    def publish(counts: tuple[int, int, list[str]]) -> None:
        signed, total, stale = counts
        gauge.labels("signed").set(signed)
        gauge.labels("unsigned").set(total - signed - len(stale))
        gauge.labels("stale").set(len(stale))

    def changed(old: CatalogSnapshot, new: CatalogSnapshot) -> None:
        nonlocal last
        counts = signature_counts(signatures, catalog, new)
        publish(counts)
        # Which skills, not only how many: a live edit, or the check after a start from the last run's
        # snapshot, must name each skill it leaves unsigned (issue 19: it dropped signatures silently).
        for uri in sorted(set(counts[2]) - set(last[2])):
            logger.warning(
                "%s changed since it was signed and is now served unsigned (sign again)",
                uri,
                extra={"event": "signature_stale", "skill": uri},
            )
        for uri in sorted(set(last[2]) - set(counts[2])):
            logger.warning("%s matches its signature again and is served signed", uri, extra={"event": "signature_ok"})
        if counts[0] != last[0] or counts[2] != last[2]:
            logger.info(
                "signatures changed: %d of %d skills signed, %d changed since signing",
                counts[0],
                counts[1],
                len(counts[2]),
                extra={"event": "signature_change", "signed": counts[0], "stale": len(counts[2])},
            )
        last = counts

    publish(last)
    catalog.on_change(changed)


def summary(snapshot: CatalogSnapshot) -> str:
    skills, files = len(snapshot.skill_by_uri), len(snapshot.files)
    lines = [f"skillwire: serving {skills} skill{'' if skills == 1 else 's'}, {files} file{'' if files == 1 else 's'}"]
    unlisted = skills - len(snapshot.listed)
    if unlisted:
        lines[0] += f" ({unlisted} unlisted: served by address, not in skills/list)"
    if snapshot.skipped:
        lines.append(f"skillwire: skipped {len(snapshot.skipped)} skills:")
        # Folder names and reasons are values from the served folders: one line each, whatever they hold.
        lines += [f"  - {escape(str(s.location), None)}: {escape(s.reason, None)}" for s in snapshot.skipped]
    if snapshot.ignored:
        lines.append(f"skillwire: ignored {len(snapshot.ignored)} paths:")
        lines += [f"  - {escape(str(path), None)}: {escape(why, None)}" for path, why in snapshot.ignored]
    return "\n".join(lines)


def signature_summary(signatures: SignatureBook, catalog: SkillCatalog, snapshot: CatalogSnapshot) -> str:
    signed, total, stale = signature_counts(signatures, catalog, snapshot)
    lines = [f"skillwire: {signed} of {total} skills carry a publisher signature"]
    lines += [f"skillwire: {line}" for line in catalog.root_signatures.misplaced(catalog.roots)]
    if stale:
        lines.append(f"skillwire: {len(stale)} changed since they were signed and are served unsigned (sign again):")
        lines += [f"  - {uri}" for uri in stale]
    return "\n".join(lines)


def fix_malloc_mmap_threshold(threshold: int = 1024 * 1024) -> bool:
    """On glibc, keep allocations of `threshold` bytes and more on mmap (returned to the system when
    freed) for the life of this server process, and trim the heap only past twice that; returns whether
    it applied.

    Left alone, glibc raises its mmap threshold every time a large block is freed (up to 32 MiB), after
    which a refresh's multi-megabyte transient tables come from the heap, where freed space is kept:
    RSS across 30 watcher refreshes of 10,000 skills rose 197 -> 218 MB. At glibc's starting 128 KiB
    (the value here until issue 25) each ~171 KB `skills/list` page of 100 entries got a fresh mapping:
    1,700-2,400 minor faults and 9-12 ms of system CPU per 2,000-skill listing. At 1 MiB (trim at 2 MiB)
    pages stay on the heap (0 faults, 3 ms) and the refreshes still level off: 192 -> 207 MB, against
    182 -> 197 MB at 128 KiB (2026-12-02, load 1-4). A process-wide setting, so `skillwire serve` sets
    it, not the library.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, threshold)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, 2 * threshold))
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # from glibc's <malloc.h>


def serve_options(args: argparse.Namespace) -> ServeOptions:
    """The flags as `ServeOptions` (server/options.py places the caches and builds the auth settings)."""
    return ServeOptions(
        directory_read=not args.no_directory_read,
        page_size=args.page_size,
        ttl_ms=args.ttl_ms,
        cache_scope=args.cache_scope,
        enforce_limits=not args.no_limits,
        digest_cache=args.digest_cache,
        persist_digests=not args.no_digest_cache,
        snapshot_cache=not args.no_snapshot_cache and os.environ.get(NO_SNAPSHOT_ENV, "1") != "0",
        poll_seconds=DEFAULT_POLL_SECONDS if args.poll is None else args.poll,
        blob_cache_bytes=args.blob_cache_mb * 1024 * 1024,
        tokens=args.tokens,
        audiences=tuple(args.audience),
        listing=ListingRules(args.listing),
        signature_files=tuple(args.signatures),
        metrics=not args.no_metrics,
        replica_state=args.replica_state,
        accept_older_index=args.accept_older_index,
        search_tool=not args.no_search_tool,
        trusted_commit_keys=trusted_commit_keys(args.trust_file) if args.require_signed_commit else None,
        accept_older_commit=args.accept_older_commit,
    )


def load_catalog(args: argparse.Namespace, options: ServeOptions, paths: list[str]) -> SkillCatalog:
    """`ServeOptions.catalog` of the roots given; a git root that cannot be served is one line (exit 2)."""
    if has_git_root(paths) and not args.quiet:
        logging.getLogger("skillwire.git").setLevel(logging.INFO)  # say when a new commit is served
    try:
        return options.catalog(parse_sources(paths))
    except GitError as exc:
        raise UsageError(str(exc)) from None


def exit_on_interrupt() -> None:
    """Ctrl-C ends a stdio server at once.

    The SDK reads stdin in a worker thread that cancellation cannot stop, so the ordinary
    KeyboardInterrupt would wait for the next line from the client (forever, at a terminal). A stdio
    server has nothing to finish: it writes nothing but its answers, and each is flushed as sent.
    """
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum: int, frame: object) -> None:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(INTERRUPTED)

    signal.signal(signal.SIGINT, stop)


def host_cut_warning(skills: SkillsExtension, snapshot: CatalogSnapshot) -> str | None:
    """One line when a host with Claude Code's listing limits would not list every listed skill (issue 36)."""
    cut = skills.host_cut(CLAUDE_CODE, snapshot)
    if not cut.cut:
        return None
    limits = cut.limits
    return (
        f"{limits.host} lists the first {cut.kept:,} of the {len(snapshot.listed):,} listed skills "
        f"({cut.why}; its limits per server: {limits.describe()}): choose which are listed with "
        "--list/--unlist GLOB; the others stay loadable by address (skills/get) and findable by the search tool"
    )


def start_catalog(
    args: argparse.Namespace,
    catalog: SkillCatalog,
    roots: list[SkillRoot],
    published: bool,
    signatures: SignatureBook,
    sock: socket.socket | None,
    skills: SkillsExtension,
) -> None:
    """The catalog's first snapshot, checked and summarised: "nothing to serve" (a `UsageError`), the
    start-up summary, the host-limit warning, the signature counts, and the signature watch for later
    reloads."""
    snapshot = catalog.snapshot
    problem = None if args.allow_empty or published else nothing_to_serve(roots, snapshot)
    if not catalog.validated and (args.no_watch or problem is not None):
        # Without a watcher nothing would validate it later; and "nothing to serve" (an error) is
        # only ever said about the disk as it is now, never about the last run's snapshot.
        catalog.validate()
        snapshot = catalog.snapshot
        problem = None if args.allow_empty or published else nothing_to_serve(roots, snapshot)
    if problem is not None:
        if sock is not None:
            sock.close()
        if snapshot.skipped:
            log_summary(snapshot)  # the reasons
        raise UsageError(problem)
    if not args.quiet:
        log_summary(snapshot)
        warning = host_cut_warning(skills, snapshot)
        if warning is not None:
            say("host_cut", warning)
        if not catalog.validated:
            say(
                "warm_start",
                "from the last run's snapshot; checking the folders now (a signed skill edited since is named then)",
            )
        if signatures or catalog.root_signatures.any_file(catalog.roots):
            if current_format() == "json":
                signed, total, stale = signature_counts(signatures, catalog, snapshot)
                say("signatures", f"{signed} of {total} skills carry a publisher signature", signed=signed)
                for line in catalog.root_signatures.misplaced(catalog.roots):
                    say("signature_misplaced", line)
                for uri in stale:
                    say("signature_stale", f"{uri} changed since it was signed and is served unsigned", skill=uri)
            else:
                print(signature_summary(signatures, catalog, snapshot), file=sys.stderr, flush=True)
    if signatures or catalog.roots:
        # Folders are watched for a `skillwire sign` while serving too: its signatures are live (as an edit).
        watch_signatures(catalog, signatures, snapshot)


def exit_on_failure(step: Callable[[], None], debug: bool) -> Callable[[], None]:
    """`step`, run by a stdio server in a worker thread, where a failure ends the process: said in the
    command's one line (or as a traceback with --debug), then `os._exit` with the command's exit code.
    Raising would not end it: the SDK's stdin reader is a thread no cancellation reaches, so the server
    would wait for the client's next line. Nothing is left to finish: the first scan wrote its caches
    before returning, and a stdio server's answers are flushed as they are sent."""

    def run() -> None:
        try:
            step()
        except Exception as exc:
            if debug and not isinstance(exc, UsageError):
                traceback.print_exc()
                code = 1
            else:
                code = say_failure(exc)
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)

    return run


def run(args: argparse.Namespace) -> int:
    configure_logging(args.log_format, debug=args.debug, quiet=args.quiet, requests=args.log_requests)
    fix_malloc_mmap_threshold()
    paths = args.paths or [str(bundled_examples())]
    published = any(is_store_url(p) for p in paths)
    # Every mistake on the command line is found before the scan, which can take a while.
    if not published and has_git_root(paths):
        parse_root_specs(paths)  # only parsed here: `serve` fetches (in each worker)
        roots: list[SkillRoot] = []
    else:
        roots = [] if published else parse_roots(paths)
    if published and args.listing:
        raise UsageError(
            "--list/--unlist: a published catalog lists what its publisher chose, so every replica lists alike; "
            "choose with `skillwire publish --list/--unlist`"
        )
    if args.require_signed_commit and not has_git_root(paths):
        raise UsageError("--require-signed-commit applies to a git root (git+https://…, git+ssh://…, git+file://…)")
    if args.workers < 1:
        raise UsageError(f"--workers wants a number of processes, 1 or more; got {args.workers}")
    address = None if args.stdio else parse_host_port(args.http or DEFAULT_HTTP)
    try:
        sock = None if address is None else bind_http_socket(*address)
    except BindError as exc:
        # The port is only one of the problems: an empty folder would fail too once the port is free, and
        # "port in use" alone sends the user to fix the wrong thing first. Both are said, the folder first.
        empty = [] if args.allow_empty else roots_without_discovered_skills(roots)
        if empty:
            say("nothing_to_serve", no_skill_md_message(empty))
        say("bind_failed", str(exc.strerror))
        return 2 if empty else 1
    if sock is not None and address is not None:
        # `--http 127.0.0.1:0` lets the kernel pick the port: the one bound is the one announced and linked.
        address = (address[0], int(sock.getsockname()[1]))
    if args.workers > 1:
        if sock is None:
            raise UsageError("--workers needs HTTP (stdio serves one client)")
        from skillwire.server.workers import run_workers

        quiet = args.quiet

        def worker(index: int) -> int:
            args.quiet = quiet or index > 0  # one summary and one "listening on", not one per worker
            configure_logging(args.log_format, debug=args.debug, quiet=args.quiet, requests=args.log_requests)
            return serve(args, paths, published, roots, address, sock)

        # Before the fork and before prometheus_client is imported: N workers, one scrape (ops.metrics).
        with contextlib.closing(sock), multiprocess_directory():  # the parent's copy; each worker has its own
            return run_workers(args.workers, worker, debug=args.debug)
    # Closed here too when loading the catalog fails (a store that cannot be reached, bad credentials).
    with sock if sock is not None else contextlib.nullcontext():
        return serve(args, paths, published, roots, address, sock)


def serve(
    args: argparse.Namespace,
    paths: list[str],
    published: bool,
    roots: list[SkillRoot],
    address: tuple[str, int] | None,
    sock: socket.socket | None,
) -> int:
    options = serve_options(args)
    if options.tokens is not None and address is None:
        raise UsageError("--tokens needs HTTP: a stdio server has no bearer tokens")
    catalog = load_catalog(args, options, paths)
    roots = catalog.roots  # a git root has no folder: its tree is read from git's objects
    try:
        signatures = options.catalog_signatures(catalog)  # the folders' and each git tree's committed one
    except SigningError as exc:
        raise UsageError(str(exc)) from None
    # Nothing above scans folders (a published catalog has read its index, a git root has listed its tree):
    # the first scan is `first_scan`, which a stdio server runs while it already answers its handshake.
    served = options.extension(
        catalog,
        base_url=None if address is None else http_base_url(*address),
        signatures=signatures,
        sources="\x1f".join([str(root.path) for root in roots] or paths),
    )
    skills = served.extension

    first_scan = functools.partial(start_catalog, args, catalog, roots, published, signatures, sock, skills)
    server = served.server(log_requests=args.log_requests)
    watch = not args.no_watch
    if args.no_watch and args.poll is not None and args.poll > 0 and (published or has_git_root(paths)):
        # `--no-watch` is about folders; `--poll` given by name still follows a branch or a pointer.
        watch = True
        catalog.folders_watched = False
    if address is None:
        exit_on_interrupt()
        anyio.run(lambda: serve_stdio(server, skills, watch=watch, load=exit_on_failure(first_scan, args.debug)))
        return 0
    first_scan()
    host, port = address

    def ready(url: str) -> None:
        if not args.quiet:
            say("listening", f"listening on {url}", url=url)

    verifier = served.token_verifier

    async def metrics_audiences(token: str) -> frozenset[str] | None:
        access = None if verifier is None else await verifier.verify_token(token)
        return None if access is None else frozenset(access.scopes)

    anyio.run(
        lambda: serve_http(
            server,
            skills,
            host=host,
            port=port,
            allowed_hosts=args.allow_host,
            watch=watch,
            on_ready=ready,
            sock=sock,
            # A legacy session lives in one worker's memory, and the kernel may hand the client's next
            # connection to another worker; stateless, any worker answers any request.
            legacy_sessions=args.workers <= 1,
            drain_seconds=args.drain_seconds,
            grace_seconds=args.grace_seconds,
            metrics_token_check=metrics_audiences if verifier is not None else None,
            metrics=served.metrics,
            ui=None if args.no_ui else ServedPages(skills, verifier),
        ),
        backend_options=event_loop_options(),  # uvloop: the HTTP stack's event loop (server/app.py)
    )
    return 0
