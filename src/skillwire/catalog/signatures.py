"""Signing a catalog's skills, and the signatures file a server reads back.

`skillwire sign ROOT --key KEY` signs every skill it would serve (the same scan and rules as
`skillwire serve`) and writes `ROOT/.skillwire-signatures.json`: for each skill URI, the signature and
the digest of the statement it covers (core/signing.py). `skillwire serve` reads that file from each
root and annotates each entry whose statement still matches; a skill edited since it was signed is
served unsigned and named at start-up, never with a signature that would not verify.

Signing is OpenSSH's own `ssh-keygen -Y sign`, so a key is whatever OpenSSH accepts: a private key
file, or a public key file whose private half is in `ssh-agent` (as `git -c gpg.format=ssh` does).
skillwire never reads or writes a private key itself. The file is never served (catalog/filesystem.py
ignores it by name).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skillwire.core.entry import SkillEntry
from skillwire.core.errors import SigningError
from skillwire.core.signing import (
    NAMESPACE,
    SIGNATURE_META_KEY,
    Signature,
    first_changed_file,
    manifest_statement,
    signed_files,
    statement_digest,
)

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
