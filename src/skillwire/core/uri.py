"""Everything about skill URIs lives here: parsing, formatting, and resolution inside a skill.

A skill file URI is `<scheme>://<skill-path>/<file-path>` (SEP-2640 "Mapping"). `<skill-path>` is one
or more segments whose last one is the skill's name; `<file-path>` is relative to the skill root and
uses `/`. The skill root (`<scheme>://<skill-path>`, no trailing slash) is also the skill's directory
URI, and the skill itself is named by its `SKILL.md` URI.

Segments are kept *decoded*; the text form is canonical: every segment percent-encoded with the RFC
3986 `pchar` set (the authority with the `reg-name` set), upper-case hex. Anything that could make a
path mean something other than what it looks like is refused rather than normalised: `.`/`..`
segments (raw or percent-encoded), an encoded `/` or `\\`, NUL and other control characters, empty
segments, query and fragment parts. A request URI that survives parsing therefore names exactly one
path and can never climb out of the catalog or out of a skill.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from urllib.parse import quote, unquote, unquote_to_bytes

from skillwire.core.errors import InvalidSkillURI

SKILL_MD = "SKILL.md"
DEFAULT_SCHEME = "skill"

# `\Z`, not `$`: Python's `$` also matches before a trailing newline.
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*\Z")
# RFC 3986 4.2: a reference whose first segment holds a `:` has a scheme (or is a `C:` drive path).
_REF_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
# A scheme, then `://`: what every skill URI starts with (`is_absolute`). Anchored, and linear: one class, then
# a literal, so a long hostile text without `://` is read once.
_ABSOLUTE_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
# RFC 3986: pchar = unreserved / pct-encoded / sub-delims / ":" / "@"; reg-name drops ":" and "@".
_PCHAR_SAFE = "!$&'()*+,;=:@-._~"
_REG_NAME_SAFE = "!$&'()*+,;=-._~"
_PCT_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_FORBIDDEN_DECODED = re.compile(r"[\x00-\x1f\x7f-\x9f/\\]")  # C0, DEL, C1, `/`, `\`


@lru_cache(maxsize=65536)
def encode_segment(segment: str, *, authority: bool = False) -> str:
    """Percent-encode one decoded segment in canonical form (cached: catalogs repeat names a lot)."""
    return quote(segment, safe=_REG_NAME_SAFE if authority else _PCHAR_SAFE)


def _decode_segment(raw: str, uri: str) -> str:
    if raw == "":
        raise InvalidSkillURI(uri, "empty path segment")
    if _PCT_RE.search(raw):
        raise InvalidSkillURI(uri, f"malformed percent-encoding in segment {raw!r}")
    try:
        decoded = unquote_to_bytes(raw).decode("utf-8")
    except UnicodeError:  # invalid UTF-8 once decoded, or a lone surrogate in the text itself
        raise InvalidSkillURI(uri, f"segment {raw!r} is not UTF-8 once percent-decoded") from None
    if decoded in (".", ".."):
        raise InvalidSkillURI(uri, f"dot segment {raw!r} is not allowed")
    bad = _FORBIDDEN_DECODED.search(decoded)
    if bad:
        raise InvalidSkillURI(uri, f"segment {raw!r} contains a forbidden character {bad.group()!r}")
    return decoded


@lru_cache(maxsize=65536)
def validate_segment(segment: str) -> str:
    """Check a decoded segment (a folder or file name) can be published; return it unchanged."""
    try:
        encoded = encode_segment(segment)
    except UnicodeError:  # a lone surrogate, e.g. an undecodable file name from os.listdir
        raise InvalidSkillURI(repr(segment), "segment is not valid Unicode text") from None
    return _decode_segment(encoded, segment)


@dataclass(frozen=True, order=True)
class ParsedURI:
    """A URI split into its scheme and decoded path segments (the authority is segment 0)."""

    scheme: str
    segments: tuple[str, ...]

    def __str__(self) -> str:
        return format_uri(self.scheme, self.segments)

    def is_within(self, root: ParsedURI) -> bool:
        """True when this URI is `root` itself or lies below it."""
        n = len(root.segments)
        return self.scheme == root.scheme and self.segments[:n] == root.segments

    def relative_to(self, root: ParsedURI) -> tuple[str, ...] | None:
        """The segments below `root`, or None when this URI is not inside it."""
        if not self.is_within(root):
            return None
        return self.segments[len(root.segments) :]


def format_uri(scheme: str, segments: tuple[str, ...] | list[str]) -> str:
    if not segments:
        raise InvalidSkillURI(f"{scheme}://", "a skill URI needs at least an authority segment")
    parts = [encode_segment(segments[0], authority=True)]
    parts.extend(encode_segment(s) for s in segments[1:])
    return f"{scheme}://" + "/".join(parts)


def parse_uri(uri: str) -> ParsedURI:
    """Parse any `<scheme>://seg/seg/...` URI strictly; raise `InvalidSkillURI` with the reason."""
    if not isinstance(uri, str):
        raise InvalidSkillURI(repr(uri), "not a string")
    scheme, sep, rest = uri.partition("://")
    if not sep:
        raise InvalidSkillURI(uri, "missing '<scheme>://'")
    if not _SCHEME_RE.match(scheme):
        raise InvalidSkillURI(uri, f"invalid scheme {scheme!r}")
    if "?" in rest or "#" in rest:
        raise InvalidSkillURI(uri, "query and fragment parts are not allowed")
    if rest == "":
        raise InvalidSkillURI(uri, "missing authority")
    if rest.endswith("/"):
        raise InvalidSkillURI(uri, "trailing '/' (directory URIs have no trailing slash)")
    segments = tuple(_decode_segment(raw, uri) for raw in rest.split("/"))
    return ParsedURI(scheme.lower(), segments)


def canonical_uri(uri: str) -> str:
    """The canonical text form of `uri` (raises `InvalidSkillURI` when it cannot be parsed)."""
    return str(parse_uri(uri))


@dataclass(frozen=True, order=True)
class SkillPath:
    """Where a skill lives: a scheme and its `<skill-path>` segments. The last segment is its name."""

    scheme: str
    segments: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.segments:
            raise InvalidSkillURI(f"{self.scheme}://", "a skill path needs at least one segment")
        for segment in self.segments:
            validate_segment(segment)

    @classmethod
    def from_skill_md_uri(cls, uri: str) -> SkillPath:
        """The skill named by a `.../SKILL.md` URI; raise `InvalidSkillURI` for anything else."""
        parsed = parse_uri(uri)
        if len(parsed.segments) < 2 or parsed.segments[-1] != SKILL_MD:
            raise InvalidSkillURI(uri, f"a skill is named by its {SKILL_MD} URI: <scheme>://<skill-path>/{SKILL_MD}")
        return cls(parsed.scheme, parsed.segments[:-1])

    @classmethod
    def parse(cls, path: str, *, scheme: str = DEFAULT_SCHEME) -> SkillPath:
        """A skill path written as `acme/billing/refunds` (decoded, `/`-separated)."""
        return cls(scheme, tuple(path.strip("/").split("/")))

    @property
    def name(self) -> str:
        return self.segments[-1]

    @cached_property
    def root(self) -> ParsedURI:
        return ParsedURI(self.scheme, self.segments)

    @cached_property
    def root_uri(self) -> str:
        return format_uri(self.scheme, self.segments)

    @cached_property
    def skill_md_uri(self) -> str:
        return self.file_uri(SKILL_MD)

    def file_uri(self, file_path: str) -> str:
        """The URI of a file inside this skill, from its `/`-separated path relative to the root."""
        return format_uri(self.scheme, self.segments + split_relative_path(file_path))

    def file_path_of(self, uri: str) -> str | None:
        """The relative file path of `uri` inside this skill, or None when it is not inside."""
        try:
            rel = parse_uri(uri).relative_to(self.root)
        except InvalidSkillURI:
            return None
        return "/".join(rel) if rel else None

    def resolve(self, reference: str) -> str:
        """Resolve a relative reference (as written in SKILL.md) against the skill root.

        `./x`, `a/../b` and the like are normalised, but the result can never leave the skill:
        a reference that climbs above the root, is absolute, or names another scheme is refused.
        """
        ref = reference.split("#", 1)[0].split("?", 1)[0]
        if "://" in ref or ref.startswith("/") or ref.startswith("\\") or _REF_SCHEME_RE.match(ref):
            raise InvalidSkillURI(reference, "only references relative to the skill root can be resolved")
        stack: list[str] = []
        for raw in ref.replace("\\", "/").split("/"):
            if raw in ("", "."):
                continue
            if raw == "..":
                if not stack:
                    raise InvalidSkillURI(reference, f"climbs out of the skill root {self.root_uri}")
                stack.pop()
                continue
            stack.append(_decode_segment(raw, reference))
        if not stack:
            raise InvalidSkillURI(reference, "names the skill root itself, not a file")
        return format_uri(self.scheme, self.segments + tuple(stack))


def split_relative_path(file_path: str) -> tuple[str, ...]:
    """Split a decoded `/`-separated relative path, refusing empty, `.` and `..` parts."""
    parts = tuple(file_path.split("/"))
    for part in parts:
        if part in ("", ".", ".."):
            raise InvalidSkillURI(file_path, "file paths are relative, without empty, '.' or '..' parts")
        validate_segment(part)
    return parts


# --- URI-prefix scope: the one rule every scope uses (trust keys, audiences, anything that scopes by URI) ---


def canonical_scope(prefix: str) -> str:
    """The canonical text of a URI-prefix scope (`skill://acme`, `skill://acme/billing`).

    One trailing `/` is accepted and dropped (people write `skill://acme/`); anything `parse_uri`
    refuses is refused, so an empty prefix, a bare scheme or a non-canonical spelling
    (`SKILL://acme`, `skill://%61cme`) never becomes a scope that silently covers nothing or everything:
    the spelling is canonicalised, and what cannot be parsed raises `InvalidSkillURI`.
    """
    if not isinstance(prefix, str) or not prefix.strip():
        raise InvalidSkillURI(repr(prefix), "an empty scope would cover every URI; name a prefix such as skill://acme")
    text = prefix[:-1] if prefix.endswith("/") and not prefix.endswith("://") else prefix
    return canonical_uri(text)


def in_scope(uri: str, scope: str) -> bool:
    """True when canonical `uri` is the canonical `scope` itself or lies below it at a `/` boundary.

    Both arguments must already be canonical text (`canonical_uri`, `canonical_scope`): this is a hot
    path (every skill of a listing, per caller) and does no parsing. `skill://acme` covers
    `skill://acme/x/SKILL.md`, never the sibling `skill://acmesoft/...`.
    """
    return uri == scope or (uri.startswith(scope) and uri[len(scope)] == "/")


# --- Structure of canonical URI text: fast helpers (no parsing) -----------------------------------------------
#
# For URIs skillwire published or already canonicalised (`canonical_uri`), taking the text apart at `/`
# gives the encoded segments, and each prefix is itself a canonical directory URI, so hot paths (laying
# out a snapshot's directories, finding a skill by a file's URI, per-caller views) work on the text
# without re-parsing. Every such walk in skillwire goes through these (`tests/test_protocol_owners.py`
# fails on a hand-written `index("://")` or `rfind("/")` on a URI elsewhere). `python -m
# bench.uri_bench` compares them with the inline slicing they replaced.


def is_absolute(text: str) -> bool:
    """Whether `text` is an absolute URI (`<scheme>://...`) rather than a name or a path relative to a skill.

    The one rule every caller that takes "a URI or a name/path" applies (a model's tool argument, a command
    line's SKILL argument, an index's URI field, a `--root PATH=PREFIX`). It says nothing about the rest
    of the text: a caller that needs a valid URI still parses it (`parse_uri`, `canonical_uri`). A `://`
    anywhere but right after a scheme (`docs/a://b`) is not absolute; a relative reference holding it is
    refused by `SkillPath.resolve`.
    """
    return _ABSOLUTE_RE.match(text) is not None


def scheme_of(uri: str) -> str:
    """`skill` for `skill://acme/x`; "" when the text has no `://`."""
    sep = uri.find("://")
    return uri[:sep] if sep > 0 else ""


def authority_of(uri: str) -> str:
    """The first segment as written (`acme` for `skill://acme/x/SKILL.md`); "" without `://`."""
    sep = uri.find("://")
    if sep < 0:
        return ""
    rest = uri[sep + 3 :]
    slash = rest.find("/")
    return rest if slash < 0 else rest[:slash]


def parent_of(uri: str) -> str | None:
    """The directory URI that holds `uri` (`skill://a/b` for `skill://a/b/c`); None for an authority
    (`skill://a`, which has no parent) or text without `://`."""
    sep = uri.find("://")
    if sep < 0:
        return None
    slash = uri.rfind("/", sep + 3)
    return uri[:slash] if slash >= 0 else None


def ancestors(uri: str, *, longest: int | None = None) -> Iterator[str]:
    """Every directory URI above `uri`, nearest first, down to the authority (`skill://a/b/c` →
    `skill://a/b`, `skill://a`); nothing for an authority. Lazy: a lookup that stops at its first match
    builds nothing beyond it.

    `longest` skips the ancestors longer than that without building them: a lookup that knows no key is
    longer (the longest skill root of a catalog) stays linear in a hostile request URI of a million
    segments, where slicing every ancestor would be quadratic."""
    sep = uri.find("://")
    if sep < 0:
        return
    start = sep + 3
    cut = len(uri) if longest is None else min(len(uri), longest + 1)
    while (cut := uri.rfind("/", start, cut)) >= 0:
        yield uri[:cut]


def lineage(uri: str, *, longest: int | None = None) -> Iterator[str]:
    """`uri` itself, then each directory above it (`ancestors`, with the same `longest` bound); nothing
    for text without `://`."""
    if "://" in uri:
        if longest is None or len(uri) <= longest:
            yield uri
        yield from ancestors(uri, longest=longest)


def child_name(uri: str) -> str:
    """The decoded last segment of canonical `uri` (`a b.md` for `skill://x/a%20b.md`)."""
    return unquote(uri[uri.rfind("/") + 1 :])  # for an authority, the last "/" is the one in "://"
