"""Composition and conversion: ruamel's events to a node tree with lines, then to JSON under npm
yaml's ``toJS`` order and alias budget (and a copy budget of our own)."""

from __future__ import annotations

import math

from ruamel.yaml.error import YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)

from skillwire.core.errors import FrontmatterError
from skillwire.core.json import JSONValue
from skillwire.core.yaml._jsnum import _js_number_to_string
from skillwire.core.yaml._scanner import _events, _scalar_text, _syntax_error
from skillwire.core.yaml._schema import (
    _TAG,
    _YAML11_COLLECTION_TAGS,
    _YAML11_SCALAR_TAGS,
    _resolve_plain,
    _resolve_tagged,
    _Scalar,
)

MAX_ALIAS_COUNT = 100
#: Collections nested deeper than this are refused (frontmatter is flat in practice).
MAX_DEPTH = 200
#: At most this many JSON values may come from expanding aliases (npm yaml's budget lets aliases
#: of empty collections through uncounted; we copy aliased values, so we count them all).
MAX_ALIAS_NODES = 10_000


class _Node:
    __slots__ = ("anchor", "line")

    def __init__(self, anchor: str | None, line: int) -> None:
        self.anchor = anchor
        self.line = line


class _ScalarNode(_Node):
    __slots__ = ("value",)

    def __init__(self, anchor: str | None, line: int, value: _Scalar) -> None:
        super().__init__(anchor, line)
        self.value = value


class _SeqNode(_Node):
    __slots__ = ("items",)

    def __init__(self, anchor: str | None, line: int) -> None:
        super().__init__(anchor, line)
        self.items: list[_Node] = []


class _MapNode(_Node):
    __slots__ = ("pairs", "pending_key")

    def __init__(self, anchor: str | None, line: int) -> None:
        super().__init__(anchor, line)
        self.pairs: list[tuple[_Node, _Node]] = []
        self.pending_key: _Node | None = None


class _AliasNode(_Node):
    __slots__ = ("target",)

    def __init__(self, name: str, line: int, target: _Node) -> None:
        super().__init__(None, line)
        self.anchor = name
        self.target = target


def _compose(yaml_text: str, first_line: int) -> _Node | None:
    """Build the node tree of the single document in ``yaml_text`` (None when there is none)."""
    anchors: dict[str, _Node] = {}
    stack: list[_SeqNode | _MapNode] = []
    root: _Node | None = None
    documents = 0
    events, restore = _events(yaml_text)

    def attach(node: _Node) -> None:
        nonlocal root
        if not stack:
            root = node
            return
        parent = stack[-1]
        if isinstance(parent, _SeqNode):
            parent.items.append(node)
        elif parent.pending_key is None:
            parent.pending_key = node
        else:
            parent.pairs.append((parent.pending_key, node))
            parent.pending_key = None

    try:
        for event in events:
            line = first_line + event.start_mark.line if event.start_mark is not None else first_line
            if isinstance(event, ScalarEvent):
                tag = event.tag
                text = _scalar_text(event, restore)
                if tag is None:
                    value = _resolve_plain(text) if event.style is None else text
                elif tag in _YAML11_SCALAR_TAGS:
                    raise FrontmatterError(
                        f"YAML 1.1 tag !!{tag[len(_TAG) :]} is not supported in frontmatter (its value is not JSON)",
                        line=line,
                    )
                else:
                    value = _resolve_tagged(text, str(tag))
                node: _Node = _ScalarNode(event.anchor, line, value)
                attach(node)
                if event.anchor is not None:
                    anchors[event.anchor] = node
            elif isinstance(event, (SequenceStartEvent, MappingStartEvent)):
                kind = "seq" if isinstance(event, SequenceStartEvent) else "map"
                if event.tag is not None and _YAML11_COLLECTION_TAGS.get(str(event.tag)) == kind:
                    raise FrontmatterError(
                        f"YAML 1.1 tag !!{str(event.tag)[len(_TAG) :]} is not supported in frontmatter "
                        "(its value is not JSON)",
                        line=line,
                    )
                if len(stack) >= MAX_DEPTH:
                    raise FrontmatterError(f"collections are nested more than {MAX_DEPTH} deep", line=line)
                collection: _SeqNode | _MapNode = (
                    _SeqNode(event.anchor, line) if kind == "seq" else _MapNode(event.anchor, line)
                )
                attach(collection)
                if event.anchor is not None:
                    anchors[event.anchor] = collection
                stack.append(collection)
            elif isinstance(event, (SequenceEndEvent, MappingEndEvent)):
                stack.pop()
            elif isinstance(event, AliasEvent):
                target = anchors.get(event.anchor)
                if target is None:
                    raise FrontmatterError(f"alias *{event.anchor} refers to no anchor defined before it", line=line)
                attach(_AliasNode(event.anchor, line, target))
            elif isinstance(event, DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise FrontmatterError(
                        "frontmatter holds more than one YAML document (a '---' or '...' line inside it?)",
                        line=line,
                    )
                version = event.version
                if version is not None and tuple(version) != (1, 2):
                    raise FrontmatterError(
                        f"%YAML {'.'.join(map(str, version))} directive: frontmatter is YAML 1.2", line=line
                    )
            elif isinstance(event, (DocumentEndEvent, StreamStartEvent, StreamEndEvent)):
                pass
    except YAMLError as exc:
        raise _syntax_error(exc, yaml_text, first_line) from None
    return root


# --------------------------------------------------------------------------------------------------
# Conversion to JSON, with npm yaml's alias accounting
# --------------------------------------------------------------------------------------------------


class _AnchorData:
    __slots__ = ("alias_count", "count", "done", "height", "res", "size")

    def __init__(self) -> None:
        self.count = 1
        self.alias_count = 0
        self.res: JSONValue = None
        self.done = False
        self.size = -1  # JSON values in `res`, once measured
        self.height = 0  # collections nested in `res`


def _measure(value: JSONValue) -> tuple[int, int]:
    """(number of JSON values, nesting height) of a value; a scalar is (1, 0)."""
    if isinstance(value, list):
        items = [_measure(item) for item in value]
    elif isinstance(value, dict):
        items = [_measure(item) for item in value.values()]
    else:
        return 1, 0
    return 1 + sum(size for size, _ in items), 1 + max((height for _, height in items), default=0)


def _copy_json(value: JSONValue) -> JSONValue:
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _copy_json(item) for key, item in value.items()}
    return value


class _Converter:
    """npm yaml's ``toJS``: same traversal order, same alias budget, JSON-only output.

    Aliased values are copied, so on top of npm yaml's own budget (which does not count aliases
    of empty collections) the copies may add at most `MAX_ALIAS_NODES` values in all, and may not
    nest deeper than `MAX_DEPTH`.
    """

    def __init__(self) -> None:
        self.anchors: dict[int, _AnchorData] = {}
        self.expanded = 0

    def value(self, node: _Node, depth: int) -> JSONValue:
        result = self.convert(node, depth)
        if isinstance(result, float) and not math.isfinite(result):
            raise FrontmatterError(
                f"{_js_number_to_string(result)} is not a finite number; frontmatter must be JSON",
                line=node.line,
            )
        return result

    def convert(self, node: _Node, depth: int) -> JSONValue:
        """``node`` as JSON; ``depth`` is the number of collections around it."""
        if isinstance(node, _AliasNode):
            return self.resolve_alias(node, depth)
        data: _AnchorData | None = None
        if node.anchor is not None:
            data = _AnchorData()
            self.anchors[id(node)] = data
        result: JSONValue
        if isinstance(node, _ScalarNode):
            result = node.value
            if data is not None:
                data.res = result
        elif isinstance(node, _SeqNode):
            items: list[JSONValue] = []
            if data is not None:
                data.res = items
            for item in node.items:
                items.append(self.value(item, depth + 1))
            result = items
        else:
            assert isinstance(node, _MapNode)
            mapping: dict[str, JSONValue] = {}
            if data is not None:
                data.res = mapping
            key_lines: dict[str, int] = {}
            for key_node, value_node in node.pairs:
                key = self.key(key_node, depth + 1)
                if key in key_lines:
                    raise FrontmatterError(
                        f"duplicate key {key!r} (first defined on line {key_lines[key]})",
                        line=key_node.line,
                        kind="duplicate-key",
                    )
                key_lines[key] = key_node.line
                mapping[key] = self.value(value_node, depth + 1)
            result = mapping
        if data is not None:
            data.done = True
        return result

    def key(self, node: _Node, depth: int) -> str:
        target = node.target if isinstance(node, _AliasNode) else node
        if not isinstance(target, _ScalarNode):
            raise FrontmatterError("mapping keys must be scalars (a JSON object key is a string)", line=node.line)
        jskey = self.convert(node, depth)
        if jskey is None:
            return ""
        if isinstance(jskey, bool):
            return "true" if jskey else "false"
        if isinstance(jskey, (int, float)):
            return _js_number_to_string(jskey)
        assert isinstance(jskey, str)
        return jskey

    def resolve_alias(self, node: _AliasNode, depth: int) -> JSONValue:
        found = node.target
        data = self.anchors.get(id(found))
        if data is None:
            self.convert(found, depth)
            data = self.anchors[id(found)]
        if not data.done:
            raise FrontmatterError(f"alias *{node.anchor} refers to a node that contains it", line=node.line)
        # npm yaml's budget (Alias.resolve): the anchor's use count times its own alias weight.
        data.count += 1
        if data.alias_count == 0:
            data.alias_count = self.alias_count(found)
        if data.count * data.alias_count > MAX_ALIAS_COUNT:
            raise FrontmatterError(
                f"alias *{node.anchor} expands too much (more than {MAX_ALIAS_COUNT} alias expansions, "
                "as in a 'billion laughs' attack)",
                line=node.line,
            )
        # Ours: the copies themselves stay small and shallow.
        if data.size < 0:
            data.size, data.height = _measure(data.res)
        self.expanded += data.size
        if self.expanded > MAX_ALIAS_NODES:
            raise FrontmatterError(
                f"aliases expand to more than {MAX_ALIAS_NODES} values (as in a 'billion laughs' attack)",
                line=node.line,
            )
        if depth + data.height > MAX_DEPTH:
            raise FrontmatterError(f"alias *{node.anchor} nests collections more than {MAX_DEPTH} deep", line=node.line)
        return _copy_json(data.res)

    def alias_count(self, node: _Node) -> int:
        if isinstance(node, _AliasNode):
            data = self.anchors.get(id(node.target))
            return data.count * data.alias_count if data is not None else 0
        if isinstance(node, _SeqNode):
            return max((self.alias_count(item) for item in node.items), default=0)
        if isinstance(node, _MapNode):
            return max(
                (max(self.alias_count(k), self.alias_count(v)) for k, v in node.pairs),
                default=0,
            )
        return 1
