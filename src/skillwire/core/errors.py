"""Everything skillwire raises lives here: one hierarchy, catchable at any level.

The rule: every exception skillwire raises on purpose, in any layer (core, catalog, server, client,
host, checks, bridge), is defined in this module, derives from `SkillwireError` and is importable from
the package root. The modules that raise one import it from here (and keep the name importable where it
was, for code written against that). Two kinds of exception are not here: the command line's own two
signals, `cli/args.UsageError` and `cli/connect.ClientError`, which never leave the `skillwire` command
(they become an exit status and one line), and private ones (`_Name`) that a module raises and catches
itself for control flow. `tests/test_error_owner.py` holds the rule.

`SkillwireError` is the root. Callers who only care that *something about a skill
is wrong* catch `SkillError`; hosts that must tell a lying server from a broken
skill catch `VerificationFailed` (and its four precise children) separately. Serving and publishing
errors (`StoreError`, `InvalidIndex`, `BindError`, ...) and the bridge's (`BridgeConfigError`,
`UpstreamUnavailable`) are at the end.
"""

from __future__ import annotations

from typing import Literal


class SkillwireError(Exception):
    """Root of every exception skillwire raises on purpose."""


class SkillError(SkillwireError):
    """A skill, its entry or one of its files breaks a rule of SEP-2640 or Agent Skills."""


class InvalidSkillURI(SkillError, ValueError):
    """A string is not a usable skill URI (bad scheme, empty or hostile segment, climbs out of its root)."""

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"invalid skill URI {uri!r}: {reason}")
        self.uri = uri
        self.reason = reason


class InvalidName(SkillError, ValueError):
    """A skill name breaks the Agent Skills naming rules."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"invalid skill name {name!r}: {reason}")
        self.name = name
        self.reason = reason


NotASkillKind = Literal["no-frontmatter", "unclosed", "not-utf8"]
FrontmatterErrorKind = Literal["syntax", "duplicate-key", "not-a-mapping"]


class NotASkill(SkillError):
    """Text that should be a SKILL.md is not one; `kind` says why as data (tools branch on it, never on
    the message): no frontmatter block, a block that is never closed, not UTF-8."""

    def __init__(self, message: str, *, kind: NotASkillKind = "no-frontmatter") -> None:
        super().__init__(message)
        self.kind: NotASkillKind = kind


class FrontmatterError(SkillError):
    """The YAML frontmatter of a SKILL.md cannot be decoded into a JSON object.

    `line` is 1-based within the SKILL.md file when known, so tools can point at it; `kind` says which
    rule broke (invalid YAML or not JSON-compatible, a duplicate key, not a mapping) as data.
    """

    def __init__(self, message: str, line: int | None = None, *, kind: FrontmatterErrorKind = "syntax") -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.line = line
        self.kind: FrontmatterErrorKind = kind


class InvalidEntry(SkillError, ValueError):
    """A skill entry (as sent in skills/list or skills/get) is malformed."""


class LimitExceeded(SkillError):
    """A skill exceeds the SEP's per-skill limits (512 files, 16 MiB)."""

    def __init__(self, message: str, *, files: int | None = None, total_bytes: int | None = None) -> None:
        super().__init__(message)
        self.files = files
        self.total_bytes = total_bytes


class InvalidCursor(SkillwireError, ValueError):
    """A pagination cursor that this catalog never issued (forged, truncated, or from another listing)."""


class SkillChanged(SkillError):
    """The skill on the server no longer matches the entry the host holds; refresh and re-approve.

    Every `VerificationFailed` is a `SkillChanged`: whatever the precise mismatch, the remedy is the
    same (fetch the entry again with `skills/get`, show the diff, ask again).
    """


class VerificationFailed(SkillChanged):
    """Bytes or metadata received from a server do not match the entry that described them."""

    def __init__(self, uri: str, message: str) -> None:
        super().__init__(f"{uri}: {message}")
        self.uri = uri


class SizeMismatch(VerificationFailed):
    def __init__(self, uri: str, expected: int, actual: int) -> None:
        super().__init__(uri, f"size mismatch: manifest says {expected} bytes, received {actual}")
        self.expected = expected
        self.actual = actual


class DigestMismatch(VerificationFailed):
    def __init__(self, uri: str, expected: str, actual: str) -> None:
        super().__init__(uri, f"digest mismatch: manifest says {expected}, received bytes hash to {actual}")
        self.expected = expected
        self.actual = actual


class FrontmatterMismatch(VerificationFailed):
    def __init__(self, uri: str, differences: list[str]) -> None:
        super().__init__(uri, "frontmatter differs from the entry: " + "; ".join(differences))
        self.differences = differences


class UnlistedFile(VerificationFailed):
    def __init__(self, uri: str, skill_uri: str) -> None:
        super().__init__(uri, f"not listed in the manifest of {skill_uri}")
        self.skill_uri = skill_uri


class SignatureError(SkillError):
    """A skill's publisher signature is missing, does not verify, or is by a key the host does not trust.

    Raised before the approval is asked, when the host's trust policy requires a signature. The digest
    check says the bytes match what this server listed; a signature says the publisher meant them.
    """

    def __init__(self, uri: str, message: str) -> None:
        super().__init__(f"{uri}: {message}")
        self.uri = uri


class SignatureMissing(SignatureError):
    """The entry carries no publisher signature (or its annotation is malformed)."""


class SignatureInvalid(SignatureError):
    """The signature does not verify over the entry: the skill or its manifest changed after signing."""


class UntrustedSigner(SignatureError):
    """The signature verifies, but by a key that is not trusted for this origin or URI prefix."""

    def __init__(self, uri: str, message: str, *, fingerprint: str) -> None:
        super().__init__(uri, message)
        self.fingerprint = fingerprint


class ServedFileChanged(SkillwireError):
    """The server side: a published file's bytes no longer match the digest its snapshot published (it
    changed on disk after the scan, or was swapped for a link, a FIFO or a folder). The server answers
    the read with an error and rescans; it never serves the new bytes under the old digest. (A host
    that receives bytes not matching an entry raises `VerificationFailed` instead.)"""


class ServerError(SkillwireError):
    """A skills server answered a request with an error, or with something that is not a valid answer."""

    def __init__(self, message: str, *, code: int | None = None, origin: str | None = None) -> None:
        prefix = f"{origin}: " if origin else ""
        super().__init__(prefix + message + (f" (JSON-RPC {code})" if code is not None else ""))
        self.code = code
        self.origin = origin


class RequestTimeout(ServerError):
    """A server did not answer a request within the client's timeout (`ClientLimits.timeout`)."""


class ResponseTooLarge(ServerError):
    """A server's answer passed its byte bound (a file's manifest size, or `ClientLimits`); refused unparsed."""


class ConnectionLost(ServerError):
    """The connection to a server broke (or could not be made) before the answer to a request arrived."""


class InvalidResponse(ServerError):
    """A server's answer is not a valid MCP result for the request (the protocol's own shape rules)."""


class InvalidServerEntry(ServerError, InvalidEntry):
    """A server sent a skill entry that breaks the wire rules (no `resources`, malformed files, ...)."""


class ExtensionNotDeclared(ServerError):
    """The server did not declare `io.modelcontextprotocol/skills` (or `directoryRead`), so no such call is sent."""


class SkillNotFound(ServerError):
    """The server does not serve a skill (or file) at that URI."""


class HostError(SkillwireError):
    """A host-side rule refused something (an approval, a gate, a configuration)."""


class AmbiguousName(HostError, ValueError):
    """A bare skill name that several listed skills share (`host/resolve.py`): give the URI of the one meant."""

    def __init__(self, message: str, *, name: str, uris: list[str]) -> None:
        super().__init__(message)
        self.name, self.uris = name, uris


class UnknownOrigin(HostError, KeyError):
    """No origin with that host-assigned label is configured."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown origin"


class ApprovalDenied(HostError):
    """The person (through the host's policy) did not approve loading this skill.

    `changed` is True when an earlier approval existed and was revoked because the skill's files changed
    (the refusal of a re-approval), so a model-facing message can say "changed, needs re-approval".
    """

    def __init__(self, message: str, *, changed: bool = False) -> None:
        super().__init__(message)
        self.changed = changed


class DynamicSkillDeclined(HostError):
    """The entry says `"resources": "dynamic"` and the policy does not allow unverifiable skills."""


class CrossOriginReadDenied(HostError):
    """A read on behalf of one server's skill aimed at another server, without per-call approval."""


class CodeExecutionDenied(HostError):
    """A code-execution tool call while acting on an MCP skill was not approved for that skill."""


class SkillNotActive(HostError):
    """The active skill was revoked (its manifest changed) or closed; load it again."""


class ApprovalStoreError(SkillwireError):
    """The approvals database cannot be used (corrupt, not a database, from a newer schema, unreadable)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"approval store {path}: {reason}")
        self.path = path
        self.reason = reason


class UnsafeCacheLocation(HostError):
    """A content-cache root that would turn MCP-served content into local skills (inside a discovery path)."""

    def __init__(self, root: str, discovery_path: str, reason: str) -> None:
        super().__init__(f"refusing content-cache root {root}: {reason} ({discovery_path})")
        self.root = root
        self.discovery_path = discovery_path
        self.reason = reason


# -- serving, publishing and signing catalogs ----------------------------------------------------------------


class StoreError(SkillwireError):
    """The object store could not be reached, refused a request, or holds something unusable."""


class BlobUnavailable(StoreError):
    """A file's bytes cannot be served: the store is unreachable (and they are not cached) or corrupt."""


class InvalidIndex(StoreError):
    """The pointer or the index it names is not a usable published catalog."""


class InvalidAudienceRule(SkillwireError, ValueError):
    """An `--audience` rule, an index's `audiences` or a tokens file that cannot be used."""


class InvalidListingRule(SkillwireError, ValueError):
    """A `--list` / `--unlist` glob (or a `ListingRule` in code) that cannot be used, or one given where the
    listing is not chosen (a replica of a published index lists what its publisher chose)."""


class SigningError(SkillwireError):
    """A catalog could not be signed (no ssh-keygen, an unusable key) or a signatures file is unreadable."""


class AwsCredentialsError(SkillwireError):
    """A profile's credentials cannot be had: an unsupported kind of profile, or a failing process."""


class UnsafeFile(SkillwireError, OSError):
    """What was opened is not the regular file the scan found (a FIFO, a directory, another file).

    An `OSError`, so every path that handles an unreadable file handles this one alike."""


class SdkShapeChanged(SkillwireError, RuntimeError):
    """The installed `mcp` no longer has a private attribute skillwire relies on (`server/_sdk.py`)."""


class BindError(SkillwireError, OSError):
    """The HTTP address cannot be bound (in use, not ours, not permitted); the message is one line."""


# -- local tools: lint, the mirror (pull, sync) ---------------------------------------------------------------


class LintPathError(SkillwireError, ValueError):
    """A PATH that cannot be linted at all (missing, not a folder)."""


class LockError(SkillwireError, ValueError):
    """A `skills.lock` that cannot be used (not JSON, wrong shape, a newer version); the command line
    prints it as a usage error (exit status 2)."""


class MirrorTargetError(SkillwireError, ValueError):
    """A mirror's target folder that cannot be used (under a regular file, not creatable, holding skills from
    another server); the message names the folder, and the command line prints it as a usage error (exit 2)."""


# -- the bridge ----------------------------------------------------------------------------------------------


class GitError(SkillwireError):
    """A git root (`git+URL@REF#SUBDIR`) that cannot be served: a bad spec, an unknown repository, ref or
    commit, a failed fetch or a commit signature that does not verify; the message is one line."""


class BridgeConfigError(SkillwireError, ValueError):
    """A bridge configuration that cannot work; the message is one line naming the place and the fix."""


class UpstreamUnavailable(SkillwireError):
    """An upstream cannot be reached now; `reason` is one line for the model and the person."""

    def __init__(self, label: str, reason: str) -> None:
        super().__init__(f"server {label!r} is unavailable: {reason}")
        self.label = label
        self.reason = reason


# -- the catalog page ------------------------------------------------------------------------------------------


class ViewUnavailable(SkillwireError):
    """The catalog page (`web/`) could not read what a page shows (`skillwire browse`: the server is down or
    answers garbage); the message is one line in the reader's words, shown on the page's error answer."""


# The classes above are the list: every `SkillwireError` defined in this module, in the order written. A
# hand-written list was a second copy of them (tests/test_error_owner.py, tests/test_public_api.py).
__all__ = [
    name for name, value in list(globals().items()) if isinstance(value, type) and issubclass(value, SkillwireError)
]
