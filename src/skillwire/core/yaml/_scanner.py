"""ruamel.yaml's reader and scanner, corrected to read YAML 1.2 text as npm ``yaml`` does.

The overrides target private methods of ruamel's pure-Python scanner (hence the narrow version range
in pyproject.toml); the differential tests against npm yaml, live and from the golden file, guard an
upgrade. `_events` is the one way into ruamel: text in, parse events (and placeholders) out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import Reader, ReaderError
from ruamel.yaml.scanner import Scanner, ScannerError
from ruamel.yaml.tokens import ScalarToken, TagToken

from skillwire.core.errors import FrontmatterError

_BREAKS = "\r\n\x85\u2028\u2029"
# A run of characters a quoted scalar keeps as they are (no quote, escape, blank or line break).
_FLOW_RUN = re.compile("[^ \t'\"\\\\\0" + _BREAKS + "]+")


class _Scanner(Scanner):
    """ruamel's scanner, corrected to YAML 1.2 as npm ``yaml`` reads it, where PyYAML's rules differ.

    Each correction was found by the differential test against npm yaml:

    * Tabs may separate tokens (``key:<TAB>value``, ``value<TAB># comment``, ``!tag<TAB>value``,
      tabs inside plain scalars, after enough space indentation); they may not indent block
      structure or block scalar lines. PyYAML (and so ruamel) rejects nearly every tab.
    * Continuation lines of quoted scalars and flow collections inside a block collection must be
      indented more than that collection; ruamel does not check.
    * In flow collections ``:`` before a flow indicator, or right after a JSON-like key
      (``"a":b``), is a value indicator; ``-``/``?``/``:`` start a plain scalar only before a
      character that can continue it; a tag ends at a flow indicator.
    * A comment needs a blank before it (``'x'#c`` is an error).
    * ``: value`` with an empty implicit key cannot carry a compact mapping or sequence on its line.
    * Leading blank lines of a block scalar may be less indented than its first content line.
    """

    _synthetic_last_break = False  # see `_ScannerEndingInBlanks`

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader=loader)
        self._tab_indented_at = -1  # reader index of a token that only tabs separate from the indentation
        self._explicit_keys: set[int] = set()  # columns of block `? key` entries awaiting their `: value`
        self._json_end = -1  # reader index just after the last quoted scalar or flow collection
        self._fetched_value = False  # the last token fetched was a block mapping's ':'
        self._after_value = False  # ... as seen by the scan for the token being fetched now
        self._block_increment: int | None = None  # the explicit indentation of the block scalar being read
        self._fetched_indicator = False  # the last token fetched was a block `-` or `?`
        self._after_indicator = False

    def fetch_more_tokens(self) -> Any:
        self._after_value, self._fetched_value = self._fetched_value, False
        self._after_indicator, self._fetched_indicator = self._fetched_indicator, False
        return super().fetch_more_tokens()

    def _starts_block_node(self) -> bool:
        """Whether node properties or a block indicator (``- ``, ``? ``, ``: ``) start at the reader."""
        ch, after = self.reader.peek(), self.reader.peek(1)
        return ch in "&!" or (ch in "-?:" and after in "\0 \t" + _BREAKS)

    def fetch_tag(self) -> None:
        super().fetch_tag()
        self._fetched_value = self._after_value and not self.flow_level  # `key: !tag` still awaits its value

    def fetch_anchor(self) -> None:
        super().fetch_anchor()
        self._fetched_value = self._after_value and not self.flow_level

    def fetch_block_entry(self) -> None:
        super().fetch_block_entry()
        self._fetched_indicator = not self.flow_level

    def _blank_from(self, offset: int, *, comment: bool = True) -> bool:
        """Whether the rest of the line, from ``offset`` on, is blanks and maybe (``comment``) a comment."""
        peek = self.reader.peek
        while peek(offset) in " \t":
            offset += 1
        return peek(offset) in ("#\0" if comment else "\0") + _BREAKS

    def _in_indentation(self) -> bool:
        """Whether only blanks precede the reader's position on its line."""
        column = int(self.reader.column)
        return all(self.reader.peek(-i) in " \t" for i in range(1, column + 1))

    def _check_continuation(self, spaces: int, what: str, start_mark: Any) -> None:
        """A new line inside a flow scalar or collection: npm yaml's ``continueScalar`` rule."""
        if self.indent < 0 or spaces > self.indent:
            return
        offset = spaces
        while self.reader.peek(offset) in " \t":
            offset += 1
        ch = self.reader.peek(offset)
        if ch in "\0" + _BREAKS and offset == spaces:
            return  # an empty line
        if what == "flow collection" and (
            ch in "#\0" + _BREAKS or (ch in "]}" and self.flow_level == 1 and spaces == self.indent)
        ):
            return
        self.reader.forward(spaces)
        raise ScannerError(
            f"while scanning a {what}",
            start_mark,
            f"found a continuation line indented {spaces} spaces; it must be indented more than "
            f"the enclosing block collection (column {self.indent + 1})",
            self.reader.get_mark(),
        )

    def _tab_error(self, where: str) -> ScannerError:
        return ScannerError(None, None, f"tabs are not allowed as indentation ({where})", self.reader.get_mark())

    def _skip_tab_in_indentation(self) -> bool:
        """At a tab in a line's leading blanks: skip the blanks if YAML 1.2 reads them as separation.

        That is when the line is blank, or when the spaces before the tab already indent the line
        enough and what follows is neither block structure (``- ``, ``? ``, ``: ``, or a key, which
        `fetch_value` checks) nor node properties (``&anchor``, ``!tag``), as npm yaml decides;
        otherwise the tab is indentation, which is an error.
        """
        if self._blank_from(0):
            awaiting = self._after_value or self._after_indicator  # a node may still begin here
            if awaiting and self.reader.column == 0 and self._blank_from(0, comment=False):
                # npm yaml refuses a tab on a blank line where the value of `key:` may still begin.
                raise self._tab_error("a blank line starts with a tab where a node may still begin")
            while self.reader.peek() in " \t":
                self.reader.forward()
            return True
        column = int(self.reader.column)
        spaces = 0
        while spaces < column and self.reader.peek(spaces - column) == " ":
            spaces += 1
        offset = 0
        while self.reader.peek(offset) in " \t":
            offset += 1
        ch, after = self.reader.peek(offset), self.reader.peek(offset + 1)
        structure = ch in "&!" or (ch in "-?:" and after in "\0 \t" + _BREAKS)
        if spaces != column or spaces <= self.indent or structure:
            raise self._tab_error("use spaces")
        self.reader.forward(offset)
        self._tab_indented_at = int(self.reader.index)
        return False

    def fetch_key(self) -> None:
        if not self.flow_level:
            self._explicit_keys.add(int(self.reader.column))
        super().fetch_key()
        self._fetched_indicator = not self.flow_level

    def fetch_value(self) -> None:
        key = self.possible_simple_keys.get(self.flow_level)
        if self.flow_level:
            super().fetch_value()
            return
        if key is not None:
            if key.index == self._tab_indented_at:
                raise self._tab_error("a mapping key must be indented with spaces")
            self._explicit_keys.discard(int(key.column))
            super().fetch_value()
            self._fetched_value = True
            return
        column = int(self.reader.column)
        explicit = column in self._explicit_keys
        self._explicit_keys.discard(column)
        super().fetch_value()
        self._fetched_value = True
        self._fetched_indicator = True  # a `:` with no key on its line: as `-` and `?` for tabs
        if not explicit:
            # `: value` with an empty implicit key: a compact mapping or sequence may not follow on the
            # same line (YAML 1.2 allows them only after an explicit `? key`).
            self.allow_simple_key = False

    def scan_to_next_token(self) -> None:
        peek, forward = self.reader.peek, self.reader.forward
        if self.reader.index == 0 and peek() == "\ufeff":
            forward()
        while True:
            # Asked once per line, not once per blank: asking per tab made `a:` + n tabs cost O(n**2).
            in_indentation = self.flow_level == 0 and self._in_indentation()
            tab_after_indicator = False
            while True:
                ch = peek()
                if ch == " " or (ch == "\t" and not in_indentation):
                    tab_after_indicator = tab_after_indicator or (ch == "\t" and self._after_indicator)
                    forward()
                elif ch == "\t":
                    if not self._skip_tab_in_indentation():
                        return
                else:
                    break
            if tab_after_indicator:
                # `-<TAB>&a x`, `?<TAB>- x`, `-<TAB>k: v`: npm yaml counts that tab as the indentation of
                # a block node (the last `fetch_value` checks, once the key is known to be a key).
                if self._starts_block_node():
                    raise self._tab_error("a tab after '-' or '?' before node properties or a block indicator")
                self._tab_indented_at = int(self.reader.index)
            if peek() == "#":
                if self.reader.column > 0 and peek(-1) not in " \t\ufeff":
                    raise ScannerError(
                        None,
                        None,
                        "a comment must be separated from the token before it by a space",
                        self.reader.get_mark(),
                    )
                while peek() not in "\0" + _BREAKS:
                    forward()
            if not self.scan_line_break():
                return
            if not self.flow_level:
                self.allow_simple_key = True
            else:
                spaces = 0
                while peek(spaces) == " ":
                    spaces += 1
                self._check_continuation(spaces, "flow collection", self.reader.get_mark())

    def scan_plain_spaces(self, indent: int, start_mark: Any) -> Any:
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        length = 0
        while peek(length) in " \t":
            length += 1
        whitespaces = self.reader.prefix(length)
        forward(length)
        if peek() not in _BREAKS:
            if whitespaces:
                chunks.append(whitespaces)
            return chunks
        line_break = self.scan_line_break()
        self.allow_simple_key = True
        breaks: list[str] = []
        while True:
            if self.reader.prefix(3) in ("---", "...") and peek(3) in "\0 \t" + _BREAKS:
                return None
            spaces = 0
            while peek(spaces) == " ":
                spaces += 1
            if self.flow_level:
                self._check_continuation(spaces, "flow collection", start_mark)
            forward(spaces)
            if peek() == "\t" and (self.flow_level or self.reader.column >= indent):
                while peek() in " \t":
                    forward()
            if peek() not in _BREAKS:
                break
            breaks.append(self.scan_line_break())
        if line_break != "\n":
            chunks.append(line_break)
        elif not breaks:
            chunks.append(" ")
        chunks.extend(breaks)
        return chunks

    def scan_flow_scalar_non_spaces(self, double: Any, start_mark: Any) -> Any:
        # ruamel's loop, with two corrections: an escape naming no Unicode code point (``\\UFFFFFFFF``)
        # is a syntax error, as in npm yaml (ruamel's ``chr()`` raised OverflowError/ValueError); and
        # an escaped line break followed by an empty line is refused, because npm yaml folds that
        # differently from the YAML 1.2 spec (a documented refusal). Runs of ordinary characters are
        # matched with one regular expression, not one ``peek`` per character.
        reader = self.reader
        chunks: list[str] = []
        while True:
            run = _FLOW_RUN.match(reader.buffer, reader.pointer)
            if run is not None:
                chunks.append(run.group())
                reader.forward(run.end() - run.start())
            ch = reader.peek()
            if not double and ch == "'" and reader.peek(1) == "'":
                chunks.append("'")
                reader.forward(2)
            elif (double and ch == "'") or (not double and ch in '"\\'):
                chunks.append(ch)
                reader.forward()
            elif double and ch == "\\":
                reader.forward()
                chunks.extend(self._scan_escape(start_mark))
            else:
                return chunks

    def _scan_escape(self, start_mark: Any) -> list[str]:
        """What the escape after a backslash in a double-quoted scalar stands for."""
        reader = self.reader
        ch = reader.peek()
        if ch in self.ESCAPE_REPLACEMENTS:
            reader.forward()
            return [self.ESCAPE_REPLACEMENTS[ch]]
        if ch in self.ESCAPE_CODES:
            length = self.ESCAPE_CODES[ch]
            reader.forward()
            digits = reader.prefix(length)
            if len(digits) != length or not all(d in "0123456789ABCDEFabcdef" for d in digits):
                raise ScannerError(
                    "while scanning a double-quoted scalar",
                    start_mark,
                    f"expected an escape of {length} hexadecimal digits after '\\{ch}', but found {digits!r}",
                    reader.get_mark(),
                )
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise ScannerError(
                    "while scanning a double-quoted scalar",
                    start_mark,
                    f"invalid escape '\\{ch}{digits}': U+{code:X} is beyond the last Unicode code point U+10FFFF",
                    reader.get_mark(),
                )
            reader.forward(length)
            return [chr(code)]
        if ch in _BREAKS:
            self.scan_line_break()
            breaks = self.scan_flow_scalar_breaks(True, start_mark)
            if breaks:
                raise ScannerError(
                    "while scanning a double-quoted scalar",
                    start_mark,
                    "an escaped line break followed by an empty line is read differently by YAML parsers; "
                    "drop the backslash or the empty line",
                    reader.get_mark(),
                )
            return []
        raise ScannerError(
            "while scanning a double-quoted scalar",
            start_mark,
            f"found unknown escape character {ch!r}",
            reader.get_mark(),
        )

    def scan_flow_scalar_breaks(self, double: Any, start_mark: Any) -> Any:
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        while True:
            if self.reader.prefix(3) in ("---", "...") and peek(3) in "\0 \t" + _BREAKS:
                raise ScannerError(
                    "while scanning a quoted scalar",
                    start_mark,
                    "found unexpected document separator",
                    self.reader.get_mark(),
                )
            spaces = 0
            while peek(spaces) == " ":
                spaces += 1
            self._check_continuation(spaces, "quoted scalar", start_mark)
            while peek() in " \t":
                forward()
            if peek() not in _BREAKS:
                return chunks
            chunks.append(self.scan_line_break())

    def _token_end(self) -> str:
        """Characters that may directly follow a tag or end a plain scalar here."""
        return "\0 \t" + _BREAKS + (",[]{}" if self.flow_level else "")

    def _scan_tag_suffix(self, start_mark: Any) -> str:
        # YAML 1.2 ns-tag-char: a URI character other than '!' and the flow indicators.
        peek = self.reader.peek
        chunks: list[str] = []
        length = 0
        while True:
            ch = peek(length)
            if ch == "%":
                chunks.append(self.reader.prefix(length))
                self.reader.forward(length)
                length = 0
                chunks.append(self.scan_uri_escapes("tag", start_mark))
            elif ch.isascii() and (ch.isalnum() or ch in "-;/?:@&=+$_.~*'()#"):
                length += 1
            else:
                break
        chunks.append(self.reader.prefix(length))
        self.reader.forward(length)
        if not "".join(chunks):
            raise ScannerError(
                "while parsing a tag",
                start_mark,
                f"expected a tag suffix, but found {peek()!r}",
                self.reader.get_mark(),
            )
        return "".join(chunks)

    def scan_tag(self) -> Any:
        # ruamel's scan_tag with YAML 1.2's characters: a tab or (in a flow collection) a flow
        # indicator may follow the tag, and a shorthand tag never contains '!' or a flow indicator.
        peek, forward = self.reader.peek, self.reader.forward
        start_mark = self.reader.get_mark()
        end = self._token_end()
        ch = peek(1)
        short_handle = "!"
        if ch == "!":
            short_handle = "!!"
            forward()
            ch = peek(1)
            if ch == "!" and peek(2) not in end:
                raise ScannerError(
                    "while scanning a tag", start_mark, "'!!!' does not start a tag (npm yaml refuses it)", start_mark
                )
        handle: str | None
        if ch == "<":
            handle = None
            forward(2)
            suffix = self.scan_tag_uri("tag", start_mark)
            if suffix == "!":
                raise ScannerError(
                    "while parsing a tag",
                    start_mark,
                    "the verbatim tag !<!> is not a tag (npm yaml refuses it)",
                    start_mark,
                )
            if peek() != ">":
                raise ScannerError(
                    "while parsing a tag",
                    start_mark,
                    f"expected '>' but found {peek()!r}",
                    self.reader.get_mark(),
                )
            forward()
        elif ch in end:
            if short_handle == "!!":
                raise ScannerError("while scanning a tag", start_mark, "the !! tag has no suffix", start_mark)
            handle = None
            suffix = short_handle
            forward()
        else:
            length = 1
            use_handle = False
            while ch not in end + ",[]{}":
                if ch == "!":
                    use_handle = True
                    break
                length += 1
                ch = peek(length)
            if use_handle:
                handle = self.scan_tag_handle("tag", start_mark)
            else:
                handle = short_handle
                forward()
            suffix = self._scan_tag_suffix(start_mark)
        if peek() not in end:
            raise ScannerError(
                "while scanning a tag",
                start_mark,
                f"expected a space after the tag, but found {peek()!r}",
                self.reader.get_mark(),
            )
        return TagToken((handle, suffix), start_mark, self.reader.get_mark())

    # --- YAML 1.2 flow-context rules for '?', ':' and plain scalars ---------------------------------

    def _after_json_node(self) -> bool:
        """Whether only blanks separate the reader from a just-ended quoted scalar or flow collection."""
        distance = int(self.reader.index) - self._json_end
        return self._json_end >= 0 and all(self.reader.peek(-i) in " \t" for i in range(1, distance + 1))

    def fetch_single(self) -> None:
        super().fetch_single()
        self._json_end = int(self.reader.index)

    def fetch_double(self) -> None:
        super().fetch_double()
        self._json_end = int(self.reader.index)

    def fetch_flow_sequence_end(self) -> None:
        super().fetch_flow_sequence_end()
        self._json_end = int(self.reader.index)

    def fetch_flow_mapping_end(self) -> None:
        super().fetch_flow_mapping_end()
        self._json_end = int(self.reader.index)

    def check_key(self) -> Any:
        # '?' is the key indicator only when a blank follows it, in flow collections too.
        return self.reader.peek(1) in "\0 \t" + _BREAKS

    def check_value(self) -> Any:
        following = self.reader.peek(1)
        if not self.flow_level:
            return following in "\0 \t" + _BREAKS
        # In a flow collection ':' is a value indicator before a blank or a flow indicator, and
        # right after a JSON-like key ("a":b, [a]:b).
        return following in self._token_end() or self._after_json_node()

    def check_plain(self) -> Any:
        ch, following = self.reader.peek(), self.reader.peek(1)
        if ch not in "\0 \t" + _BREAKS + "-?:,[]{}#&*!|>'\"%@`":
            return True
        return ch in "-?:" and following not in self._token_end()

    def scan_plain(self) -> Any:
        # ruamel's scan_plain, where (in a flow collection) ':' before a flow indicator ends the scalar.
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        start_mark = end_mark = self.reader.get_mark()
        indent = self.indent + 1
        spaces: list[str] = []
        end = self._token_end()
        while peek() != "#":
            length = 0
            while True:
                ch = peek(length)
                if (ch == ":" and peek(length + 1) in end) or ch in end:
                    break
                length += 1
            if length == 0:
                break
            self.allow_simple_key = False
            chunks.extend(spaces)
            chunks.append(self.reader.prefix(length))
            forward(length)
            end_mark = self.reader.get_mark()
            spaces = self.scan_plain_spaces(indent, start_mark)
            if not spaces or (not self.flow_level and self.reader.column < indent):
                break
        return ScalarToken("".join(chunks), True, start_mark, end_mark)

    def scan_block_scalar_indentation(self) -> Any:
        # PyYAML's version: ruamel adds a check that rejects a leading blank line with *fewer* spaces
        # than the lines after it, which YAML 1.2 and npm yaml allow.
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        max_indent = 0
        end_mark = self.reader.get_mark()
        blank_max = 0  # the most spaces on a leading empty line
        while peek() in " " + _BREAKS:
            if self._at_synthetic_last_break():
                forward()
                end_mark = self.reader.get_mark()
            elif peek() != " ":
                blank_max = max(blank_max, int(self.reader.column))
                chunks.append(self.scan_line_break())
                end_mark = self.reader.get_mark()
            else:
                forward()
                max_indent = max(max_indent, int(self.reader.column))
        if peek() == "\t" and self.reader.column <= self.indent:
            raise self._tab_error("in a block scalar")
        if peek() != "\0" and blank_max > self.reader.column:
            raise ScannerError(
                "while scanning a block scalar",
                None,
                "a leading empty line is indented more than the first line after it; "
                "give the block scalar an explicit indentation indicator (|2, >2)",
                self.reader.get_mark(),
            )
        return chunks, max_indent, end_mark

    def _at_synthetic_last_break(self) -> bool:
        """At the line break added after a last line of spaces, which npm yaml does not count as a line."""
        return self._synthetic_last_break and self.reader.peek() == "\n" and self.reader.peek(1) == "\0"

    def scan_block_scalar_breaks(self, indent: int) -> Any:
        # ruamel's version, plus npm yaml's rule that a tab may not stand in a block scalar's indentation.
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        end_mark = self.reader.get_mark()
        while True:
            while self.reader.column < indent and peek() == " ":
                forward()
            if peek() == "\t" and self.reader.column < indent:
                raise self._tab_error("in a block scalar")
            if peek() not in _BREAKS:
                return chunks, end_mark
            if self._at_synthetic_last_break():
                forward()
                return chunks, end_mark
            chunks.append(self.scan_line_break())
            end_mark = self.reader.get_mark()

    def scan_block_scalar(self, style: Any, rt: bool | None = False) -> Any:
        start = int(self.reader.pointer)
        min_indent = max(self.indent + 1, 1)
        token = super().scan_block_scalar(style, rt)
        if self._block_increment is not None:
            # npm yaml reads a line of spaces longer than an explicit indentation as an empty line when
            # it trails the content (YAML 1.2: a line of content); refused rather than guessed.
            indent = min_indent + self._block_increment - 1
            for line in self.reader.buffer[start : int(self.reader.pointer)].split("\n")[1:]:
                line = line.removesuffix("\r")
                if len(line) > indent and not line.strip(" "):
                    raise ScannerError(
                        "while scanning a block scalar",
                        token.start_mark,
                        f"a line of only spaces is longer than the block scalar's indentation ({indent}); YAML "
                        "readers disagree on whether it is content: remove the spaces",
                        token.end_mark,
                    )
        return token

    def scan_block_scalar_indicators(self, start_mark: Any) -> Any:
        peek, forward = self.reader.peek, self.reader.forward
        chomping: bool | None = None
        increment: int | None = None
        for _ in range(2):
            ch = peek()
            if ch in "+-" and chomping is None:
                chomping = ch == "+"
                forward()
            elif ch in "123456789" and increment is None:
                increment = int(ch)
                forward()
            elif ch == "0" and increment is None:
                raise ScannerError(
                    "while scanning a block scalar",
                    start_mark,
                    "expected indentation indicator in the range 1-9, but found 0",
                    self.reader.get_mark(),
                )
        ch = peek()
        if ch not in "\0 \t" + _BREAKS:
            raise ScannerError(
                "while scanning a block scalar",
                start_mark,
                f"expected chomping or indentation indicators, but found {ch!r}",
                self.reader.get_mark(),
            )
        self._block_increment = increment
        return chomping, increment

    def scan_block_scalar_ignored_line(self, start_mark: Any) -> Any:
        peek, forward = self.reader.peek, self.reader.forward
        while peek() in " \t":
            forward()
        if peek() == "#":
            while peek() not in "\0" + _BREAKS:
                forward()
        ch = peek()
        if ch not in "\0" + _BREAKS:
            raise ScannerError(
                "while scanning a block scalar",
                start_mark,
                f"expected a comment or a line break, but found {ch!r}",
                self.reader.get_mark(),
            )
        self.scan_line_break()
        return None


class _ScannerEndingInBlanks(_Scanner):
    """For text whose last line holds only spaces and no line break (one is added before scanning)."""

    _synthetic_last_break = True

    def scan_block_scalar(self, style: Any, rt: bool | None = False) -> Any:
        token = super().scan_block_scalar(style, rt)
        if self.reader.peek() == "\0" and not str(token.value).strip(" \n"):
            # npm yaml reads such a last line differently again when the block scalar has no content.
            raise ScannerError(
                "while scanning a block scalar",
                token.start_mark,
                "a block scalar of blank lines only ends in a line of spaces; YAML readers disagree on "
                "its value: remove the spaces",
                self.reader.get_mark(),
            )
        return token


class _Reader(Reader):
    """ruamel's reader without its printable-character check: npm ``yaml`` accepts control characters."""

    def check_printable(self, data: Any) -> None:
        return None


# Characters YAML 1.2 (and npm yaml) read as ordinary content but ruamel, following YAML 1.1, does not:
# NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR are line breaks in 1.1; a CR not followed by LF is a
# line break for ruamel but plain content for npm yaml; NUL is ruamel's end-of-input sentinel.
_SPECIAL = re.compile("[\x00\x85\u2028\u2029]|\r(?!\n)")
_TRAILING_BLANKS = re.compile(r"(?:(?<=[\r\n])|\A) +\Z")
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _join_surrogates(text: str) -> str:
    """``"\\ud83d\\ude00"`` escapes give a surrogate pair, which JavaScript reads as one character."""
    if not _SURROGATE_PAIR.search(text):
        return text
    return _SURROGATE_PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text)


def _events(yaml_text: str) -> tuple[Iterator[Any], dict[str, str]]:
    """ruamel.yaml parse events for ``yaml_text``, and the placeholders to map back in scalar values."""
    restore: dict[str, str] = {}
    if _SPECIAL.search(yaml_text):
        # Swap each special character for a private-use one that does not occur in the text.
        present = set(yaml_text)
        pool = (chr(c) for c in range(0xE000, 0xF900) if chr(c) not in present)
        placeholders: dict[str, str] = {}
        for special in sorted(set(_SPECIAL.findall(yaml_text))):
            placeholder = next(pool, None)
            if placeholder is None:  # pragma: no cover - needs 6400 distinct private-use characters
                raise FrontmatterError("frontmatter uses too many distinct private-use characters")
            placeholders[special] = placeholder
            restore[placeholder] = special
        yaml_text = _SPECIAL.sub(lambda m: placeholders[m.group()], yaml_text)
    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    yaml.Reader = _Reader
    yaml.Scanner = _Scanner
    # npm yaml ends the last line at the end of input (`a: |` + `  x`, no newline, is "x\n"); a last
    # line of only spaces is content if a block scalar indented less ends there, and ignored otherwise,
    # which `_ScannerEndingInBlanks` tells apart.
    if _TRAILING_BLANKS.search(yaml_text):
        yaml.Scanner = _ScannerEndingInBlanks
    if yaml_text and not yaml_text.endswith(("\n", "\r")):
        yaml_text += "\n"
    return iter(yaml.parse(yaml_text)), restore


def _scalar_text(event: Any, restore: dict[str, str]) -> str:
    text = str(event.value)
    for placeholder, special in restore.items():
        text = text.replace(placeholder, special)
    return _join_surrogates(text)


def _syntax_error(exc: YAMLError, yaml_text: str, first_line: int) -> FrontmatterError:
    if isinstance(exc, MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        context = f" ({exc.context})" if exc.context and exc.problem else ""
        if mark is not None:
            return FrontmatterError(
                f"invalid YAML: {problem}{context} (column {mark.column + 1})", line=first_line + mark.line
            )
        return FrontmatterError(f"invalid YAML: {problem}{context}")
    if isinstance(exc, ReaderError):
        position = int(exc.position)
        line = first_line + yaml_text.count("\n", 0, position)
        return FrontmatterError(
            f"invalid YAML: character U+{int(exc.character):04X} is not allowed ({exc.reason})", line=line
        )
    return FrontmatterError(f"invalid YAML: {exc}")
