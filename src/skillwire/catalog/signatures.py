"""Signing a catalog's skills, and the signatures file a server reads back.

`skillwire sign ROOT --key KEY` signs every skill it would serve (the same scan and rules as
`skillwire serve`) and writes `ROOT/.skillwire-signatures.json`: for each skill URI, the signature and
the digest of the statement it covers (core/signing.py). A root's file belongs to that root's files:
`RootSignatures` reads it in the scan of that root (`SkillCatalog`, so a re-sign is picked up by the
watcher like any edit) and annotates only that root's entries whose statement still matches, never a
copy of them served from another root; a skill edited since it was signed is served unsigned and
named, never with a signature that would not verify. The statement names the skill's path as served,
prefix included, so a folder served under a prefix (`serve ROOT=acme`) is signed there too (`sign
ROOT=acme`: the file keeps the signatures of every prefix it was signed for); a file that signs none
of what its root serves is named in one line (`RootSignatures.misplaced`).

Signing is OpenSSH's own `ssh-keygen -Y sign`, so a key is whatever OpenSSH accepts: a private key
file, or a public key file whose private half is in `ssh-agent` (as `git -c gpg.format=ssh` does).
skillwire never reads or writes a private key itself. The file is never served (catalog/filesystem.py
ignores it by name).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidSkillURI, SigningError
from skillwire.core.signing import (
    NAMESPACE,
    SIGNATURE_META_KEY,
    Signature,
    first_changed_file,
    manifest_statement,
    signed_files,
    statement_digest,
)

if TYPE_CHECKING:
    from skillwire.catalog.filesystem import ScanResult, SkillRoot
    from skillwire.catalog.snapshot import CatalogSkill, CatalogSnapshot

logger = logging.getLogger("skillwire.signatures")

SIGNATURES_FILE = ".skillwire-signatures.json"
_VERSION = 1
_MAX_FILE_BYTES = 64 * 1024 * 1024


def sign_statement(statement: bytes, key: Path) -> str:
    """An armored SSHSIG signature of `statement` by `key` (`ssh-keygen -Y sign -n skillwire-manifest-v1`)."""
    keygen = shutil.which("ssh-keygen")
    if keygen is None:
        raise SigningError("ssh-keygen (OpenSSH) is not installed; it makes the signatures")
    if not key.is_file():
        raise SigningError(f"no such key file: {key}")
    try:
        done = subprocess.run(
            [keygen, "-Y", "sign", "-q", "-f", str(key), "-n", NAMESPACE],
            input=statement,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SigningError(f"ssh-keygen did not sign within 60 s (is {key} waiting for a passphrase?)") from None
    if done.returncode != 0 or not done.stdout.startswith(b"-----BEGIN SSH SIGNATURE-----"):
        why = done.stderr.decode(errors="replace").strip().splitlines()
        raise SigningError(f"ssh-keygen could not sign with {key}: {why[-1] if why else 'no reason given'}")
    return done.stdout.decode("ascii")


SignedRecord = dict[str, str | dict[str, str]]


def sign_entries(entries: Iterable[SkillEntry], key: Path) -> dict[str, SignedRecord]:
    """`{uri: {"statement": digest, "signature": armored, "files": {path: digest}}}` for every non-dynamic
    entry. `files` is what was signed, file by file, so `skillwire lint` can name the first file edited
    since; the statement digest and the signature alone decide whether a signature covers an entry."""
    signed: dict[str, SignedRecord] = {}
    for entry in entries:
        if entry.is_dynamic:
            continue
        signed[entry.uri] = {
            "statement": statement_digest(entry),
            "signature": sign_statement(manifest_statement(entry), key),
            "files": signed_files(entry),
        }
    return signed


def write_signatures(root: Path, signed: Mapping[str, Mapping[str, object]], *, path: Path | None = None) -> Path:
    """Write (atomically) the signatures file of `root`, or `path` (for `serve --signatures FILE`)."""
    path = path if path is not None else root / SIGNATURES_FILE
    body = {"version": _VERSION, "namespace": NAMESPACE, "signatures": dict(sorted(signed.items()))}
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return path


@dataclass
class SignatureBook:
    """The signatures a server annotates its entries with: `{uri: (statement digest, Signature)}`."""

    records: dict[str, tuple[str, Signature]] = field(default_factory=dict)
    # {uri: {path: digest}} as signed, for the signatures files that record them (older ones do not).
    files: dict[str, dict[str, str]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.records)

    @classmethod
    def load(cls, files: Iterable[Path]) -> SignatureBook:
        """Read signatures files; a missing file adds nothing, an unreadable one is a `SigningError`."""
        book = cls()
        for path in files:
            try:
                if path.stat().st_size > _MAX_FILE_BYTES:
                    raise SigningError(f"{path}: over {_MAX_FILE_BYTES:,} bytes; not a signatures file")
                raw: Any = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                continue
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise SigningError(f"{path}: unreadable signatures file ({exc})") from None
            book.add(path, raw)
        return book

    def add(self, path: Path, raw: Any) -> None:
        if not isinstance(raw, dict) or raw.get("version") != _VERSION or raw.get("namespace") != NAMESPACE:
            raise SigningError(f"{path}: not a version-{_VERSION} skillwire signatures file")
        signatures = raw.get("signatures")
        if not isinstance(signatures, dict):
            raise SigningError(f"{path}: 'signatures' is not an object")
        for uri, record in signatures.items():
            ok = isinstance(record, dict) and all(isinstance(record.get(k), str) for k in ("statement", "signature"))
            if not ok:
                raise SigningError(f"{path}: the record for {uri!r} needs 'statement' and 'signature' strings")
            self.records[uri] = (record["statement"], Signature(record["signature"]))
            files = record.get("files")
            if files is None:
                continue  # written before signed files were recorded: still a valid signature
            if not (isinstance(files, dict) and all(isinstance(v, str) for v in files.values())):
                raise SigningError(f"{path}: the record for {uri!r} has 'files' that is not an object of digests")
            self.files[uri] = files

    def signature_for(self, entry: SkillEntry) -> Signature | None:
        """The signature recorded for this exact entry, or None (unsigned, or changed since signing)."""
        record = self.records.get(entry.uri)
        if record is None or entry.is_dynamic:
            return None
        try:
            current = statement_digest(entry)
        except ValueError:  # a URI in it is not canonical: no statement, so no signature can be attached
            return None
        return record[1] if current == record[0] else None

    def annotate(self, entry: SkillEntry) -> SkillEntry:
        """`entry` with its signature in `_meta` (the same entry when there is none to add)."""
        signature = self.signature_for(entry)
        if signature is None:
            return entry
        return replace(entry, meta={**(entry.meta or {}), SIGNATURE_META_KEY: signature.to_meta()})

    def stale(self, entries: Iterable[SkillEntry]) -> list[str]:
        """URIs with a recorded signature that no longer matches what is served (edited since signing)."""
        by_uri = {entry.uri: entry for entry in entries}
        return sorted(uri for uri in self.records if uri in by_uri and self.signature_for(by_uri[uri]) is None)

    def first_difference(self, entry: SkillEntry) -> tuple[str, str] | None:
        """For a stale signature, the first file that differs from what was signed: `(path below the skill
        root, "changed" | "added" | "removed")`; None when the signatures file does not record the signed
        files, or none differs (the frontmatter alone cannot change: it is SKILL.md's)."""
        recorded = self.files.get(entry.uri)
        return first_changed_file(recorded, entry) if recorded is not None else None


def placement_scope(root: SkillRoot) -> str:
    """The URI text every skill of `root` starts with as served: `skill://acme/` under a prefix, `skill://`
    without one."""
    from skillwire.core.uri import format_uri

    return format_uri(root.scheme, root.prefix) + "/" if root.prefix else f"{root.scheme}://"


def in_placement(uri: str, root: SkillRoot) -> bool:
    """Whether canonical `uri` lies where `root` is served: below its prefix, or in its scheme without one."""
    from skillwire.core.uri import format_uri, in_scope, parse_uri

    if root.prefix:
        return in_scope(uri, format_uri(root.scheme, root.prefix))
    try:
        return parse_uri(uri).scheme == root.scheme
    except InvalidSkillURI:
        return False


def placement_of(uri: str, root: SkillRoot, top_level: Iterable[str]) -> bool:
    """Whether a signed `uri` is one `root` could serve where it is placed (its prefix, and for a root
    without one its top-level folder names): what `sign` replaces, leaving other prefixes' signatures."""
    from skillwire.core.uri import parse_uri

    if not in_placement(uri, root):
        return False
    if root.prefix:
        return True
    return parse_uri(uri).segments[0] in set(top_level)


def other_placements(root: SkillRoot) -> dict[str, Any]:
    """The records of `root`'s signatures file that `root`, where it is placed now, could not serve (signed
    for another prefix): what `sign` keeps beside the records it writes. Nothing when there is no file;
    an unreadable one is a `SigningError`, as for `serve`."""
    path = root.path / SIGNATURES_FILE
    if not path.is_file():
        return {}
    SignatureBook.load([path])  # the same checks as a server's (shape, version, size)
    records: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["signatures"]
    top_level = [entry.name for entry in os.scandir(root.path)]
    return {uri: record for uri, record in records.items() if not placement_of(uri, root, top_level)}


class RootSignatures:
    """Each root's own signatures file, read by the scan of that root and applied to its entries only.

    A file is read again when its stat changes (a `skillwire sign` while serving writes it by rename, and
    the watcher rescans the root for a change directly in it), so a re-sign is live like any edit. An
    unreadable file is one warning and no signatures from it (the skills are served unsigned)."""

    def __init__(self) -> None:
        self._books: dict[Path, tuple[tuple[int, int, int], SignatureBook]] = {}
        self._warned: set[tuple[Path, str]] = set()
        # Per file: the book the last annotation used, and each scanned skill it signed -> the skill served.
        self._memo: dict[Path, tuple[SignatureBook, dict[int, tuple[CatalogSkill, CatalogSkill]]]] = {}
        self._lock = threading.Lock()

    def book(self, root: SkillRoot) -> SignatureBook:
        path = root.path / SIGNATURES_FILE
        try:
            info = path.stat()
        except OSError:
            with self._lock:
                self._books.pop(path, None)
            return SignatureBook()
        key = (info.st_mtime_ns, info.st_size, info.st_ino)
        with self._lock:
            known = self._books.get(path)
        if known is not None and known[0] == key:
            return known[1]
        try:
            book = SignatureBook.load([path])
        except SigningError as exc:
            if (path, str(exc)) not in self._warned:
                self._warned.add((path, str(exc)))
                logger.warning("%s; its root's skills are served unsigned", exc)
            book = SignatureBook()
        with self._lock:
            self._books[path] = (key, book)
        return book

    def annotate(self, root: SkillRoot, result: ScanResult) -> ScanResult:
        """`result` (a scan of `root`) with each entry its root's file signs carrying the signature (and
        without one the file no longer covers). Checked once per scanned skill object and file: an
        incremental refresh keeps most skill objects, so only the rescanned ones are hashed again."""
        book = self.book(root)
        path = root.path / SIGNATURES_FILE
        with self._lock:
            known_book, known = self._memo.get(path, (None, {}))
        if known_book is not book:
            known = {}
        memo: dict[int, tuple[CatalogSkill, CatalogSkill]] = {}
        annotated: list[CatalogSkill] = []
        changed = False
        for skill in result.skills:
            entry = skill.entry
            if entry.uri not in book.records and (entry.meta is None or SIGNATURE_META_KEY not in entry.meta):
                annotated.append(skill)
                continue
            hit = known.get(id(skill))
            signed = hit[1] if hit is not None and hit[0] is skill else _signed(book, skill)
            memo[id(skill)] = (skill, signed)
            changed = changed or signed is not skill
            annotated.append(signed)
        with self._lock:
            self._memo[path] = (book, memo)
        return replace(result, skills=annotated) if changed else result

    def stale(self, roots: Sequence[SkillRoot], snapshot: CatalogSnapshot) -> list[str]:
        """URIs a root's file signs that its root serves, changed since signing (served unsigned)."""
        found: set[str] = set()
        for root in roots:
            book = self.book(root)
            for uri in book.records:
                skill = snapshot.skill_by_uri.get(uri)
                if skill is not None and SIGNATURE_META_KEY not in (skill.entry.meta or {}):
                    found.add(uri)
        return sorted(found)

    def misplaced(self, roots: Sequence[SkillRoot]) -> list[str]:
        """One line per root whose file signs skills, none of them where the root is served (signed
        without the prefix it is served under, or under another one)."""
        lines = []
        for root in roots:
            book = self.book(root)
            scope = placement_scope(root)
            if book and not any(in_placement(uri, root) for uri in book.records):
                spec = f"{root.path}={'/'.join(root.prefix)}" if root.prefix else str(root.path)
                lines.append(
                    f"{root.path / SIGNATURES_FILE} signs {len(book)} skills, none under {scope} where this root "
                    f"is served: its skills are served unsigned (sign them there: skillwire sign {spec} --key KEY)"
                )
        return lines

    def any_file(self, roots: Sequence[SkillRoot]) -> bool:
        return any(self.book(root) for root in roots)


def _signed(book: SignatureBook, skill: CatalogSkill) -> CatalogSkill:
    """`skill` carrying the signature `book` has for it, or none (the same object when nothing changes)."""
    entry = skill.entry
    meta = entry.meta
    bare = entry
    if meta is not None and SIGNATURE_META_KEY in meta:
        bare = replace(entry, meta={k: v for k, v in meta.items() if k != SIGNATURE_META_KEY} or None)
    signed = book.annotate(bare)
    if signed.meta == meta:
        return skill
    return replace(skill, entry=signed)
