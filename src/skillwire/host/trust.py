"""Which publisher keys a host trusts, for which origins and URI prefixes, and what it does without one.

A digest match proves the bytes are what this server listed, not that the publisher meant them: a
compromised server or an intermediary can rewrite a skill and its manifest together. A signature over
the manifest (core/signing.py) by a key the person trusts is what closes that gap.

`TrustPolicy(mode, keys)`:
- `off` (the default): signatures are not looked at.
- `warn`: a skill that is unsigned, does not verify, or is signed by an untrusted key loads, with a
  warning logged; a verified signer is shown in the approval prompt.
- `require`: such a skill is refused before the approval is asked, with `SignatureMissing`,
  `SignatureInvalid` or `UntrustedSigner`.

A trusted key applies to every origin and URI unless it is scoped with `origins` (host-assigned
labels) and/or `prefixes` (URI prefixes such as `skill://acme/`); a scoped key counts only inside its
scope. Prefixes follow the one scope rule (`core/uri.canonical_scope` / `in_scope`): canonical text,
matched at a `/` boundary, so `skill://acme` never covers `skill://acmesoft/...`, and an empty prefix
is refused rather than covering everything. A trust file of any other shape is refused, naming the key.
The verified signer is bound into the stored approval (`bound_files`), so a skill re-signed by another
key asks again, with the change shown.

`TrustStore` keeps the keys in `<user config dir>/skillwire/trust.json` (written by `skillwire trust`);
it holds public keys only.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import platformdirs

from skillwire.core.entry import SkillEntry
from skillwire.core.errors import SignatureError, SignatureMissing, UntrustedSigner
from skillwire.core.manifest import ManifestFile, sha256_digest
from skillwire.core.signing import fingerprint_of, public_key_of, verify_entry
from skillwire.core.uri import canonical_scope, canonical_uri, in_scope
from skillwire.host.identity import SkillRef, validate_origin_label

__all__ = ["TrustPolicy", "TrustStore"]

logger = logging.getLogger("skillwire.host")

TrustMode = Literal["off", "warn", "require"]
TRUST_FILE_NAME = "trust.json"
_SIGNER_URI_PREFIX = "signer:"  # never a file URI (those always have "://")


@dataclass(frozen=True)
class TrustedKey:
    """A publisher key the person trusts, optionally only for some origins or URI prefixes."""

    name: str
    public_key: str  # OpenSSH line: "ssh-ed25519 AAAA..."
    origins: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(public_key_of(self.public_key))

    def __post_init__(self) -> None:
        # Scopes are kept canonical (core/uri.canonical_scope): `skill://acme/`, `SKILL://acme` and
        # `skill://%61cme` are one scope, and an empty prefix (which would cover every URI) is refused.
        try:
            for label in self.origins:
                validate_origin_label(label)
            prefixes = tuple(canonical_scope(prefix) for prefix in self.prefixes)
        except ValueError as exc:
            raise ValueError(f"trusted key {self.name!r}: {exc}") from None
        object.__setattr__(self, "prefixes", prefixes)

    def covers(self, ref: SkillRef) -> bool:
        in_origin = not self.origins or ref.origin in self.origins
        if not in_origin or not self.prefixes:
            return in_origin
        uri = canonical_uri(ref.uri)  # a SkillRef keeps the URI as the server spelled it
        return any(in_scope(uri, prefix) for prefix in self.prefixes)

    def describe(self) -> str:
        scope = [f"origin {o!r}" for o in self.origins] + [f"under {p}/" for p in self.prefixes]
        return f"{self.name} ({self.fingerprint})" + (f", for {' and '.join(scope)}" if scope else "")


@dataclass(frozen=True)
class SignatureCheck:
    """What the trust policy found for one skill."""

    status: Literal["verified", "unsigned", "invalid", "untrusted", "not checked"]
    signer: TrustedKey | None = None  # set when verified by a trusted key
    fingerprint: str | None = None  # the key that signed, whenever the signature verified
    reason: str = ""
    error: SignatureError | None = None  # what `require` raises

    def describe(self) -> str:
        """Who signed, in the host's own words: the trusted key's name from the trust file, fingerprints the
        host computed, and a fixed phrase per status; never a server's string (the reason names the entry's
        URI and is for logs and exceptions, written one line at a time by their own callers)."""
        if self.signer is not None:
            return f"signed by {self.signer.name} ({self.fingerprint})"
        if self.status == "untrusted":
            return f"signed by {self.fingerprint}, a key not trusted here for this skill"
        return {
            "unsigned": "not signed",
            "invalid": "a publisher signature that does not verify over this skill",
            "not checked": "signature not checked",
        }[self.status]


@dataclass
class TrustPolicy:
    """The host's rule for publisher signatures. See the module docstring."""

    mode: TrustMode = "off"
    keys: Sequence[TrustedKey] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.mode not in ("off", "warn", "require"):
            raise ValueError("a trust mode is 'off', 'warn' or 'require'")

    def inspect(self, ref: SkillRef, entry: SkillEntry) -> SignatureCheck:
        """What the signature of `entry` is worth for `ref`, without refusing anything."""
        if self.mode == "off":
            return SignatureCheck("not checked")
        try:
            signer = verify_entry(entry)
        except SignatureMissing as exc:
            return SignatureCheck("unsigned", reason=str(exc), error=exc)
        except SignatureError as exc:
            return SignatureCheck("invalid", reason=str(exc), error=exc)
        trusted = next((key for key in self.keys if key.covers(ref) and key.fingerprint == signer.fingerprint), None)
        if trusted is None:
            error = UntrustedSigner(
                entry.uri,
                f"signed by {signer.fingerprint}, a key not trusted for origin {ref.origin!r}"
                " (trust it with `skillwire trust add`)",
                fingerprint=signer.fingerprint,
            )
            return SignatureCheck("untrusted", None, signer.fingerprint, str(error), error)
        return SignatureCheck("verified", trusted, signer.fingerprint)

    def check(self, ref: SkillRef, entry: SkillEntry) -> SignatureCheck:
        """`inspect`, then apply the mode: `require` raises the `SignatureError`, `warn` logs it."""
        result = self.inspect(ref, entry)
        if result.error is not None:
            if self.mode == "require":
                raise result.error
            logger.warning("%s: loading anyway (trust mode 'warn'): %s", ref, result.error)
        return result


def bound_files(entry: SkillEntry, check: SignatureCheck) -> tuple[ManifestFile, ...]:
    """The set a stored approval binds to: the manifest, plus the verified signer when there is one.

    The signer rides in the bound set as one more member (a `signer:` URI never names a file), so a
    skill re-signed by another key no longer matches its approval, and the re-approval shows the change.
    """
    if check.status != "verified" or check.fingerprint is None:
        return entry.files
    marker = ManifestFile(_SIGNER_URI_PREFIX + check.fingerprint, sha256_digest(check.fingerprint.encode()), 0)
    return (*entry.files, marker)


def default_trust_path() -> Path:
    return platformdirs.user_config_path("skillwire") / TRUST_FILE_NAME


class TrustStore:
    """Trusted publisher keys in a JSON file (public keys only), as `skillwire trust` manages them."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_trust_path()

    def trusted_keys(self) -> list[TrustedKey]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise ValueError(f"{self.path}: unreadable trust file ({exc})") from None
        items = raw.get("keys") if isinstance(raw, dict) else None
        if not isinstance(items, list):
            raise ValueError(f"{self.path}: not a skillwire trust file (no 'keys' list)")
        out: list[TrustedKey] = []
        for number, item in enumerate(items, 1):
            out.append(self._key_from_file(item, number))
        return out

    def _key_from_file(self, item: object, number: int) -> TrustedKey:
        """One key of the file, its shape checked: anything unexpected refuses the whole file, naming the key
        (a `"prefixes": "skill://acme/"` string read as a list of one-letter prefixes trusted it everywhere)."""
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("name", "key")):
            raise ValueError(f"{self.path}: key {number}: every key needs a 'name' and a 'key' string")
        name = item["name"]
        unknown = sorted(set(item) - {"name", "key", "origins", "prefixes"})
        if unknown:
            raise ValueError(f"{self.path}: key {name!r}: unknown field {unknown[0]!r} (a newer skillwire's file?)")
        scopes: dict[str, tuple[str, ...]] = {}
        for field_name in ("origins", "prefixes"):
            value = item.get(field_name, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(
                    f"{self.path}: key {name!r}: {field_name!r} must be a list of strings, not {type(value).__name__}"
                    f" {json.dumps(value)[:80]}"
                )
            scopes[field_name] = tuple(value)
        try:
            public_key_of(item["key"])  # fail closed on a key that does not parse
        except ValueError as exc:
            raise ValueError(f"{self.path}: key {name!r}: {exc}") from None
        try:
            return TrustedKey(name, item["key"], scopes["origins"], scopes["prefixes"])
        except ValueError as exc:  # a prefix or origin that is no scope; the message names the key
            raise ValueError(f"{self.path}: {exc}") from None

    def policy(self, mode: TrustMode) -> TrustPolicy:
        return TrustPolicy(mode, tuple(self.trusted_keys()))

    def add(self, key: TrustedKey) -> None:
        public_key_of(key.public_key)
        keys = [k for k in self.trusted_keys() if k.name != key.name] + [key]
        self._write(keys)

    def remove(self, name: str) -> bool:
        keys = self.trusted_keys()
        kept = [k for k in keys if k.name != name]
        if len(kept) == len(keys):
            return False
        self._write(kept)
        return True

    def _write(self, keys: list[TrustedKey]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = {
            "keys": [
                {"name": k.name, "key": k.public_key, "origins": list(k.origins), "prefixes": list(k.prefixes)}
                for k in keys
            ]
        }
        temporary = self.path.with_name(self.path.name + ".tmp")
        # Whoever can write this file decides which publishers are trusted: owner-only, like approvals.
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(body, indent=1) + "\n")
        os.replace(temporary, self.path)
