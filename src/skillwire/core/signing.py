"""Publisher signatures over skill manifests: what is signed, how it travels, and how it is checked.

Everything about a signature's *content* lives here (making one needs a private key and lives in
`catalog/signatures.py`; deciding whom to trust lives in `host/trust.py`).

- **What is signed** (`manifest_statement`): the canonical JSON of the skill's path, its frontmatter and
  every file of its manifest as (path relative to the skill root, digest, size), sorted; paths come from
  the parsed URIs, and an entry whose URIs are not canonical text has no statement (it never verifies). That is the
  `{uri, digest}` set approvals bind to plus the frontmatter, with paths relative to the skill so the
  statement does not name a server. A `"dynamic"` skill has no manifest and cannot be signed.
- **The format** is SSHSIG, OpenSSH's signature format (`ssh-keygen -Y sign`), the one git uses for
  SSH-signed commits, under the namespace `skillwire-manifest-v1` (a signature made for another
  namespace, such as git's, never verifies here). Keys are ordinary SSH keys, from files or an agent.
  Verification is the `sshsig` library (pure Python over `cryptography`): no `ssh-keygen` is needed
  on a host.
- **How it travels**: in the entry's `_meta` under `io.skillwire/signature`, as
  `{"format": "sshsig", "namespace": ..., "signature": "-----BEGIN SSH SIGNATURE-----..."}`. SEP-2640
  lets servers and intermediaries annotate under their own reverse-domain prefix; hosts that do not
  know the key ignore it, so the conformance scenarios and other clients are unaffected.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillwire.core.entry import SkillEntry
from skillwire.core.errors import SignatureInvalid, SignatureMissing
from skillwire.core.protocol import SKILLWIRE_META_PREFIX
from skillwire.core.uri import canonical_uri, encode_segment, parse_uri

if TYPE_CHECKING:
    # sshsig (over `cryptography`) is imported where a signature or key is checked: a server without
    # signatures, and every start before its first signed entry, does without it.
    from sshsig.ssh_public_key import PublicKey

NAMESPACE = "skillwire-manifest-v1"
SIGNATURE_META_KEY = SKILLWIRE_META_PREFIX + "signature"
FORMAT = "sshsig"
_MAX_SIGNATURE_CHARS = 16 * 1024  # an RSA-4096 SSHSIG is about 1.3 KB armored


def manifest_statement(entry: SkillEntry) -> bytes:
    """The bytes a publisher signs for `entry` (raises `ValueError` for a dynamic skill, and for an entry
    whose URIs are not canonical, saying which).

    Every path in it comes from the parsed URIs (`core/uri.py`), never from cutting the URI text: the
    skill's decoded segments, and each file's segments below the skill root in their canonical spelling.
    So the statement names exactly the files the host will read, under the names it will read them by.
    A URI whose text is not its canonical form (`skill://acme/%61/SKILL.md`, a lower-case or needless
    escape) is refused rather than canonicalised: the host keys approvals, the cache and trust scopes by
    the URI text a server sent, so a signature must never vouch for a spelling other than the one signed.
    Canonical entries (what `skillwire serve` always sends) give the same bytes as before this rule.
    """
    if entry.is_dynamic:
        raise ValueError(f"{entry.uri}: a dynamic skill has no manifest to sign")
    if canonical_uri(entry.uri) != entry.uri:
        raise ValueError(f"the skill URI is not in canonical form ({canonical_uri(entry.uri)})")
    statement = {
        "namespace": NAMESPACE,
        "skill": entry.path.scheme + ":" + "/".join(entry.path.segments),
        "frontmatter": entry.frontmatter,
        "files": sorted(_statement_files(entry)),
    }
    return json.dumps(statement, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def _statement_files(entry: SkillEntry) -> list[list[str | int]]:
    """Each file of the statement as [path below the skill root, digest, size] (raises `ValueError` as
    `manifest_statement` does)."""
    root = entry.path.root
    files: list[list[str | int]] = []
    for item in entry.files:
        parsed = parse_uri(item.uri)
        below = parsed.relative_to(root)
        if str(parsed) != item.uri:
            raise ValueError(f"the file URI {item.uri!r} is not in canonical form ({parsed})")
        if not below:
            raise ValueError(f"the file URI {item.uri!r} is not inside the skill")
        files.append(["/".join(encode_segment(segment) for segment in below), item.digest, item.size])
    return files


def signed_files(entry: SkillEntry) -> dict[str, str]:
    """`{path below the skill root: digest}` of the files `entry`'s statement names (what a signatures
    file records beside the signature, so a later check can say which file changed)."""
    return {str(path): str(digest) for path, digest, _ in _statement_files(entry)}


def first_changed_file(recorded: Mapping[str, str], entry: SkillEntry) -> tuple[str, str] | None:
    """The first file, in path order, that differs between a signed file list (`signed_files` at signing
    time) and `entry`: `(path, "changed" | "added" | "removed")`, or None when the files all match.

    A diagnosis for people (`skillwire lint`), never a verification: whether a signature covers an entry
    is decided by the statement's digest and the signature alone."""
    try:
        current = signed_files(entry)
    except ValueError:
        return None
    for path in sorted(set(recorded) | set(current)):
        if path not in current:
            return path, "removed"
        if path not in recorded:
            return path, "added"
        if recorded[path] != current[path]:
            return path, "changed"
    return None


def statement_digest(entry: SkillEntry) -> str:
    """`sha256:` of the statement: what a signatures file records to tell a stale signature."""
    return "sha256:" + hashlib.sha256(manifest_statement(entry)).hexdigest()


@dataclass(frozen=True)
class Signature:
    """One armored SSHSIG signature over an entry's statement."""

    armored: str

    def to_meta(self) -> dict[str, Any]:
        return {"format": FORMAT, "namespace": NAMESPACE, "signature": self.armored}

    @classmethod
    def from_entry(cls, entry: SkillEntry) -> Signature:
        """The signature an entry carries in `_meta`, or `SignatureMissing` saying what is wrong."""
        record = (entry.meta or {}).get(SIGNATURE_META_KEY)
        if record is None:
            raise SignatureMissing(entry.uri, "the entry carries no publisher signature")
        if not isinstance(record, Mapping):
            raise SignatureMissing(entry.uri, f"_meta[{SIGNATURE_META_KEY!r}] is not an object")
        if record.get("format") != FORMAT or record.get("namespace") != NAMESPACE:
            raise SignatureMissing(
                entry.uri, f"the signature is not {FORMAT} in namespace {NAMESPACE} (a format this host does not read)"
            )
        armored = record.get("signature")
        if not isinstance(armored, str) or not armored or len(armored) > _MAX_SIGNATURE_CHARS:
            raise SignatureMissing(entry.uri, "the signature annotation has no usable signature text")
        return cls(armored)


@dataclass(frozen=True)
class Signer:
    """Whose key made a signature that verified: its OpenSSH public key line and SHA256 fingerprint."""

    public_key: str  # "ssh-ed25519 AAAA..."
    fingerprint: str  # "SHA256:..."


def public_key_of(line: str) -> PublicKey:
    """Parse an OpenSSH public key line (`ssh-ed25519 AAAA... comment`); `ValueError` if it is not one."""
    from sshsig.ssh_public_key import PublicKey

    try:
        return PublicKey.from_openssh_str(line.strip())
    except (ValueError, NotImplementedError, IndexError) as exc:
        raise ValueError(f"not an OpenSSH public key (ssh-ed25519 or ssh-rsa): {exc}") from None


def fingerprint_of(key: PublicKey) -> str:
    from sshsig.ssh_public_key import ssh_key_fingerprint_sha256_str

    return ssh_key_fingerprint_sha256_str(key)


def verify_entry(entry: SkillEntry) -> Signer:
    """Check the signature `entry` carries over its own statement; return who signed.

    Raises `SignatureMissing` (none, or unreadable) or `SignatureInvalid` (it does not verify: the
    skill, its frontmatter or a file changed after signing, or the signature was made for something
    else). Whether the signer is trusted is the caller's question (`host/trust.py`).
    """
    signature = Signature.from_entry(entry)
    if entry.is_dynamic:
        raise SignatureInvalid(entry.uri, "a dynamic skill cannot carry a valid signature (it has no manifest)")
    try:
        statement = manifest_statement(entry)
    except ValueError as exc:
        # A signer only ever signs canonical URIs; another spelling of them is a rewrite in transit.
        raise SignatureInvalid(entry.uri, f"the signature cannot cover this entry: {exc}") from None
    import sshsig

    try:
        key = sshsig.check_signature(statement, signature.armored, namespace=NAMESPACE)
    except (sshsig.InvalidSignature, NotImplementedError, ValueError) as exc:
        raise SignatureInvalid(
            entry.uri, f"the publisher signature does not verify over this manifest ({exc})"
        ) from None
    return Signer(key.openssh_str(), fingerprint_of(key))
