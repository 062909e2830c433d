"""The decoder's entry point: the size bound, the refusals made before decoding, the fast path, and
the catch-all that turns any failure into a `FrontmatterError`."""

from __future__ import annotations

import re

from skillwire.core.errors import FrontmatterError
from skillwire.core.json import JSONValue
from skillwire.core.yaml._compose import (
    MAX_DEPTH,
    _AliasNode,
    _compose,
    _Converter,
    _MapNode,
    _ScalarNode,
    _SeqNode,
)
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


def _refuse_deep_flow_nesting(yaml_text: str, first_line: int) -> None:
    """Flow collections opened more than `MAX_DEPTH` deep are refused before ruamel's scanner sees them.

    The scanner keeps a possible simple key per open flow level and looks ahead until each resolves,
    which is quadratic on the way to the composer's depth refusal (`docs/architecture.md` has the
    measurements). `_FlowNesting` counts, in one linear walk, the flow indicators that open and close
    collections, skipping what cannot open one: quoted scalars, comments, block scalars and block
    plain scalars (the brackets of a value like `x [y`, or of the lines continuing it). What it refuses
    nests deeper than the composer allows in any case, so the answer is the composer's own refusal,
    only earlier; where it cannot tell, it counts nothing and leaves the decision to the parser.
    """
    if yaml_text.count("[") + yaml_text.count("{") <= MAX_DEPTH:
        return  # cannot open enough collections: two counts in C, for every frontmatter
    try:
        _FlowNesting(yaml_text).walk()
    except _TooDeep as deep:
        line = first_line + yaml_text.count("\n", 0, deep.position)
        raise FrontmatterError(f"collections are nested more than {MAX_DEPTH} deep", line=line) from None


class _TooDeep(Exception):
    def __init__(self, position: int) -> None:
        self.position = position


_FLOW_SPECIAL = re.compile(r"""[\[\]{}"'#]""")
_KEY_COLON = re.compile(r":(?=[ \t\r]|$)")


class _FlowNesting:
    """One left-to-right walk over frontmatter: by lines in block context, by indicators in flow context;
    raises `_TooDeep` at the indicator that opens a flow collection more than `MAX_DEPTH` deep."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.size = len(text)

    def walk(self) -> None:
        text, size = self.text, self.size
        pos = 0
        block_parent: int | None = None  # inside a block scalar whose indicator's line has this indent
        plain_parent: int | None = None  # after a block plain scalar begun on a line with this indent
        while pos < size:
            end = text.find("\n", pos)
            end = size if end < 0 else end
            first = pos
            while first < end and text[first] == " ":
                first += 1
            column = first - pos
            blank = not text[first:end].strip()
            if block_parent is not None and (blank or column > block_parent):
                pos = end + 1  # a line of the block scalar: text
                continue
            block_parent = None
            if blank:
                pos = end + 1
                continue
            if text[first] == "#":
                plain_parent = None  # a comment line ends a plain scalar
                pos = end + 1
                continue
            if plain_parent is not None and column > plain_parent:
                pos = end + 1  # a line continuing a plain scalar: text
                continue
            plain_parent = None
            pos, block_parent, plain_parent = self._block_line(first, end, column)

    def _block_line(self, at: int, end: int, column: int) -> tuple[int, int | None, int | None]:
        """Walk a block-context line from its first non-blank `at`: (where the next line starts, the
        indent a block scalar's lines exceed, the indent a plain scalar's continuation lines exceed)."""
        text = self.text
        while at < end:
            char = text[at]
            if char in " \t":
                at += 1
            elif char in "-?:" and (at + 1 >= end or text[at + 1] in " \t\r"):
                at += 1  # a block entry, an explicit key or value: a node may follow
            elif char in "!&":
                at = self._token_end(at, end)  # a tag or an anchor: the node follows
            elif char == "#":
                break
            elif char in "|>":
                return end + 1, column, None
            elif char in "[{\"'*":
                if char == "*":
                    after = self._token_end(at, end)  # an alias: a node
                else:
                    after = self._flow(at) if char in "[{" else self._quoted(at)
                if after >= self.size:
                    return self.size, None, None
                if after > end:  # the node ended on a later line: go on there
                    found = text.find("\n", after)
                    end = self.size if found < 0 else found
                at = self._after_node(after, end)
            else:
                # A plain scalar: a key when `: ` follows on this line (before any comment), else a value
                # that more indented lines may continue.
                key = self._key_colon(at, end)
                if key is None:
                    return end + 1, None, column
                at = key + 1
        return end + 1, None, None

    def _token_end(self, at: int, end: int) -> int:
        text = self.text
        while at < end and text[at] not in " \t":
            at += 1
        return at

    def _after_node(self, at: int, end: int) -> int:
        """After a quoted, flow or alias node on a block line: past a `:` (a key: the value follows), else
        the line's end (a comment, or nothing this walk needs)."""
        text = self.text
        while at < end and text[at] in " \t":
            at += 1
        return at + 1 if at < end and text[at] == ":" else end

    def _key_colon(self, at: int, end: int) -> int | None:
        """The `:` ending a block plain key that starts at `at`, or None (a value, or a comment first)."""
        text = self.text
        stop = end
        comment = text.find("#", at, end)
        while comment >= 0:
            if text[comment - 1] in " \t":
                stop = comment
                break
            comment = text.find("#", comment + 1, end)
        found = _KEY_COLON.search(text, at, stop)
        return None if found is None else found.start()

    def _quoted(self, at: int) -> int:
        """The position after the quoted scalar starting at `at` (the text's size: it never ends)."""
        text, quote = self.text, self.text[at]
        pos = at + 1
        while True:
            close = text.find(quote, pos)
            if close < 0:
                return self.size
            if quote == "'":
                if text.startswith("''", close):
                    pos = close + 2
                    continue
                return close + 1
            back = close - 1
            while back > at and text[back] == "\\":
                back -= 1
            if (close - 1 - back) % 2 == 0:  # an even run of backslashes escapes none of the quote
                return close + 1
            pos = close + 1

    def _flow(self, at: int) -> int:
        """The position after the flow collection opening at `at` (the text's size: it never closes)."""
        text = self.text
        depth = 0
        pos = at
        special = _FLOW_SPECIAL.search
        while True:
            found = special(text, pos)
            if found is None:
                return self.size
            pos = found.start()
            char = text[pos]
            if char in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    raise _TooDeep(pos)
                pos += 1
            elif char in "]}":
                depth -= 1
                pos += 1
                if depth == 0:
                    return pos
            elif char == "#":
                if text[pos - 1] in " \t\n":
                    newline = text.find("\n", pos)
                    pos = self.size if newline < 0 else newline + 1
                else:
                    pos += 1
            elif self._node_starts_at(pos):
                pos = self._quoted(pos)
            else:
                pos += 1  # a quote inside a plain scalar: text

    def _node_starts_at(self, pos: int) -> bool:
        """Whether a quote at `pos` inside a flow collection starts a node: after `[`, `{`, `,`, `:` or `?`
        (blanks between), or after a tag or an anchor."""
        text = self.text
        back = pos - 1
        while text[back] in " \t\r\n":
            back -= 1
        if text[back] in "[{,:?":
            return True
        if back == pos - 1:
            return False  # right after a character of a plain scalar
        start = back
        while start > 0 and text[start - 1] not in " \t\r\n[{,":
            start -= 1
        return text[start] in "!&"


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
        _refuse_deep_flow_nesting(yaml_text, first_line)
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
