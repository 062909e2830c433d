"""Whether a listed skill is signed, in the host's own judgement, for `ls` and `get` (and pull's keys).

The verdict is `TrustPolicy.inspect` over the entry as listed: the publisher signature in its `_meta` is
verified here against the manifest the server sent (no file is read, so a file's bytes are checked only
when it is fetched), and the signer is judged against the person's trust file (`skillwire trust`). What a
server says about a signature is never shown: only the status this check reached, the trusted key's name
from the trust file and the fingerprint computed here. Keys scoped to an origin do not apply to a server
named on the command line (it has no host label).
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


def signature_check(entry: SkillEntry, keys: tuple[TrustedKey, ...]) -> SignatureCheck:
    policy, label = signature_policy(keys, None)
    return policy.inspect(SkillRef(label, entry.uri), entry)


def signature_json(check: SignatureCheck) -> dict[str, Any]:
    """`status` (verified, untrusted, invalid, unsigned), the trusted key's name, the signing key's fingerprint."""
    return {
        "status": check.status,
        "signer": check.signer.name if check.signer is not None else None,
        "fingerprint": check.fingerprint,
    }
