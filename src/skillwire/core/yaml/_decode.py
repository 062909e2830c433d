"""The decoder's entry point: the size bound, the refusals made before decoding, the fast path, and
the catch-all that turns any failure into a `FrontmatterError`."""

from __future__ import annotations

import re

from skillwire.core.errors import FrontmatterError
from skillwire.core.json import JSONValue
from skillwire.core.yaml._compose import _AliasNode, _compose, _Converter, _MapNode, _ScalarNode, _SeqNode
from skillwire.core.yaml._flat import parse_simple_frontmatter

#: Frontmatter longer than this (UTF-8 bytes) is refused before it is decoded. Real frontmatter is a
#: few hundred bytes (the largest of the 417 skills in the awesome-copilot corpus is 1,307 bytes; a
#: description may hold at most 1,024 characters), so 64 KiB is 50 times the largest seen. Decoding
#: is linear (``python -m bench.frontmatter_bench``: 0.007-20 ms per KB, by how many tokens a KB
#: holds), so the bound caps a hostile SKILL.md at about a second of one core, and honest
#: frontmatter at a few milliseconds.
MAX_FRONTMATTER_BYTES = 64 * 1024


def _unexpected(exc: Exception, first_line: int) -> FrontmatterError:
    """A `FrontmatterError` for a failure the decoder did not foresee (a bug here, or in ruamel).

    Skill files are untrusted input: whatever the decoder trips over must reach the caller as a
    reason attached to that one skill, never as a raw exception that stops a scan or a server.
    """
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    return FrontmatterError(
        f"the YAML decoder failed on this frontmatter ({type(exc).__name__}{': ' + detail if detail else ''})",
        line=first_line,
    )


_LONE_CR = re.compile("\r(?!\n)")


def _refuse_lone_cr(yaml_text: str, first_line: int) -> None:
    """A CR without LF is never a line end in a SKILL.md (lines are split at LF), and npm yaml reads
    it as content in some places and as a blank in others: refused (see `REFUSALS`).

    Each expression here and in `_refuse_tab_before_empty_key` needs its character (CR, tab), which
    most frontmatter lacks: a membership test is one scan in C, where the expressions tried a match
    at every position (a fifth of the decoding of a typical SKILL.md)."""
    found = _LONE_CR.search(yaml_text) if "\r" in yaml_text else None
    if found is not None:
        line = first_line + yaml_text.count("\n", 0, found.start())
        raise FrontmatterError(
            "a carriage return (CR) not followed by a line feed; YAML readers disagree on it: use LF or CRLF",
            line=line,
        )
    # A last line of blanks with a tab in it and no line break: npm yaml accepts or refuses it depending on
    # what came before (the comment lines, the nesting); it carries nothing, so it is refused.
    tail = _BLANK_LAST_LINE_WITH_TAB.search(yaml_text) if "\t" in yaml_text else None
    if tail is not None:
        raise FrontmatterError(
            "the last line holds only blanks, one a tab; YAML readers disagree on it: remove it",
            line=first_line + yaml_text.count("\n"),
        )


_BLANK_LAST_LINE_WITH_TAB = re.compile(r"(?:\A|(?<=\n))[ ]*\t[ \t]*\Z")


def _refuse_tab_before_empty_key(yaml_text: str, first_line: int) -> None:
    """After an explicit value indicator (a line starting `:`), node properties, a tab and a `:` make an
    empty key whose properties a tab separates from its `:`; npm yaml refuses that tab as indentation
    ("? k\\n: !!null\\t: y"), ruamel's scanner reads a mapping. Found by the differential fuzz run;
    refused here, where the line is plain to see, rather than in the scanner's indentation state."""
    found = _TAB_BEFORE_EMPTY_KEY.search(yaml_text) if "\t" in yaml_text else None
    if found is not None:
        raise FrontmatterError(
            "invalid YAML: tabs are not allowed as indentation (a tab between node properties and the ':' of"
            " an empty key after an explicit ':')",
            line=first_line + yaml_text.count("\n", 0, found.start()),
        )


# A line `: <properties> <blanks with a tab> :` (the last `:` followed by a blank or the line's end). The
# property tokens are split by blanks only, so each start tries each token once: linear in the line.
_TAB_BEFORE_EMPTY_KEY = re.compile(r"^[ ]*:[ \t]+(?:[!&]\S*[ \t]+)*?[!&]\S*[ ]*\t[ \t]*:(?=[ \t]|$)", re.MULTILINE)


def frontmatter_size_problem(yaml_text: str, max_bytes: int | None = MAX_FRONTMATTER_BYTES) -> str | None:
    """Why ``yaml_text`` is too long to decode (over ``max_bytes`` UTF-8 bytes), or None."""
    if max_bytes is None or len(yaml_text) * 4 <= max_bytes:
        return None
    size = len(yaml_text.encode("utf-8", "surrogatepass"))
    if size <= max_bytes:
        return None
    return f"frontmatter is {size:,} bytes, over the {max_bytes:,}-byte limit (real frontmatter is a few KB)"


def parse_frontmatter(
    yaml_text: str,
    *,
    first_line: int = 1,
    fast_path: bool = True,
    max_bytes: int | None = MAX_FRONTMATTER_BYTES,
) -> dict[str, JSONValue]:
    """Decode frontmatter YAML into a JSON object exactly as npm ``yaml`` v2 (YAML 1.2 core) does.

    ``first_line`` is the 1-based line of ``yaml_text``'s first line in the SKILL.md, so every
    `FrontmatterError` carries a line number in the file. Key order follows the file. Every failure,
    foreseen or not, is a `FrontmatterError`; so is frontmatter over ``max_bytes``
    (`MAX_FRONTMATTER_BYTES`; None lifts the bound, for benchmarks).
    """
    too_long = frontmatter_size_problem(yaml_text, max_bytes)
    if too_long is not None:
        raise FrontmatterError(too_long, line=first_line)
    try:
        _refuse_lone_cr(yaml_text, first_line)
        _refuse_tab_before_empty_key(yaml_text, first_line)
        return _parse_frontmatter(yaml_text, first_line, fast_path)
    except FrontmatterError:
        raise
    except Exception as exc:  # the one boundary where any decoder failure becomes a reason
        raise _unexpected(exc, first_line) from exc


def _parse_frontmatter(yaml_text: str, first_line: int, fast_path: bool) -> dict[str, JSONValue]:
    # Most frontmatter is flat `key: scalar` lines; that subset has a fast exact decoder.
    simple = parse_simple_frontmatter(yaml_text) if fast_path else None
    if simple is not None:
        return simple
    root = _compose(yaml_text, first_line)
    if root is None:
        raise FrontmatterError("frontmatter is empty; it must be a YAML mapping", line=first_line, kind="not-a-mapping")
    if not isinstance(root, _MapNode) and not (isinstance(root, _AliasNode) and isinstance(root.target, _MapNode)):
        kind = "a sequence" if isinstance(root, _SeqNode) else "a scalar"
        if isinstance(root, _ScalarNode) and root.value is None:
            raise FrontmatterError(
                "frontmatter is empty; it must be a YAML mapping", line=root.line, kind="not-a-mapping"
            )
        raise FrontmatterError(f"frontmatter must be a YAML mapping, not {kind}", line=root.line, kind="not-a-mapping")
    result = _Converter().value(root, 0)
    assert isinstance(result, dict)
    return result
