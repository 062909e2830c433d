"""Whether a listed skill is signed, in the host's own judgement, for `ls` and `get` (and pull's keys).

The verdict is `TrustPolicy.inspect` over the entry as listed: the publisher signature in its `_meta` is
verified here against the manifest the server sent (no file is read, so a file's bytes are checked only
when it is fetched), and the signer is judged against the person's trust file (`skillwire trust`). What a
server says about a signature is never shown: only the status this check reached, the trusted key's name
from the trust file and the fingerprint computed here. Keys scoped to an origin apply only under
`--origin LABEL` (the label a host gives the server): without it a server named on the command line has
no host label, and a skill signed by such a key is `untrusted` with a note naming the `--origin` to pass.
"""

from __future__ import annotations

from typing import Any

from skillwire.cli.output import Output, printable
from skillwire.core.entry import SkillEntry
from skillwire.host.identity import SkillRef
from skillwire.host.mirror.drift import signature_policy
from skillwire.host.trust import SignatureCheck, TrustedKey, TrustStore

# The `ls` flag of each status; an unsigned skill has none.
FLAGS = {"verified": "signed", "untrusted": "signed-untrusted", "invalid": "bad-signature"}


def trusted_keys(out: Output) -> tuple[TrustedKey, ...]:
    """The keys of the person's trust file (`skillwire trust`); none, with a note, when it cannot be read."""
    try:
        return tuple(TrustStore().trusted_keys())
    except ValueError as exc:
        out.warn(f"note: {printable(str(exc))}; no publisher key counts as trusted")
        return ()


def signature_check(entry: SkillEntry, keys: tuple[TrustedKey, ...], origin: str | None = None) -> SignatureCheck:
    policy, label = signature_policy(keys, origin)
    return policy.inspect(SkillRef(label, entry.uri), entry)


def origin_note(checks: list[SignatureCheck], keys: tuple[TrustedKey, ...], origin: str | None) -> str | None:
    """The note for skills judged `untrusted` only because their signer's key is trusted for other origins
    than this one (or any origin while none was given): which key, which origins, and the flag to pass."""
    scoped = {key.fingerprint: key for key in keys if key.origins and origin not in key.origins}
    signers = {check.fingerprint for check in checks if check.status == "untrusted" and check.fingerprint}
    named = [scoped[fingerprint] for fingerprint in sorted(signers & scoped.keys())]
    if not named:
        return None
    key = named[0]
    labels = " or ".join(repr(label) for label in key.origins)
    given = "no --origin was given" if origin is None else f"this server is judged as origin {origin!r}"
    return (
        f"note: key {key.name!r} is trusted only for origin {labels} and {given}; pass --origin "
        f"{key.origins[0]} if that is the label your host gives this server"
    )


def signature_json(check: SignatureCheck) -> dict[str, Any]:
    """`status` (verified, untrusted, invalid, unsigned), the trusted key's name, the signing key's fingerprint."""
    return {
        "status": check.status,
        "signer": check.signer.name if check.signer is not None else None,
        "fingerprint": check.fingerprint,
    }
