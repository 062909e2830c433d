"""One owner per rule, second round (issue 24): the protocol's vocabulary lives in `core/protocol.py`
and the params models in `core/params.py`.

Read from the AST of `src/skillwire`: a string literal that *is* one of the protocol's names (the
extension id, a method name, the directory MIME type, a `_meta` prefix or key, the `directoryRead`
setting) anywhere but in its owner is a second definition, and so is a class deriving from the wire
types' `RequestParams` outside `core/params.py`. Prose that merely mentions a method ("skills/get
failed for …") is a longer string and is not matched: only a literal equal to the name, which is what
code compares or sends, is. The scanners are first run on a planted copy so the test can fail.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from skillwire.core import protocol
from support.imports import MODULES

PROTOCOL_OWNER = "skillwire.core.protocol"
PARAMS_OWNER = "skillwire.core.params"

# Every name the vocabulary owns, read from the owner itself so a new constant is watched at once.
VOCABULARY = {
    value
    for name, value in vars(protocol).items()
    if name.isupper() and isinstance(value, str) and not name.startswith("_")
}
# `_meta` keys are built from the prefixes; a literal that starts with one is a key spelled by hand.
META_PREFIXES = (protocol.SPEC_META_PREFIX, protocol.SKILLWIRE_META_PREFIX)
PARAMS_BASES = {"RequestParams", "PaginatedRequestParams"}


def vocabulary_literals(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value
            if value in VOCABULARY or value.startswith(META_PREFIXES):
                yield value


def params_models(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases}
            if bases & PARAMS_BASES:
                yield node.name


def test_the_vocabulary_covers_the_names_both_sides_spell() -> None:
    assert {
        "io.modelcontextprotocol/skills",
        "skills/list",
        "skills/get",
        "resources/directory/read",
        "inode/directory",
        "directoryRead",
        "io.skillwire/",
    } <= VOCABULARY


def test_the_scanners_find_a_planted_copy() -> None:
    planted = ast.parse(
        "EXTENSION_ID = 'io.modelcontextprotocol/skills'\n"
        "class GetSkillParams(RequestParams):\n    uri: str\n"
        "def send(s):\n"
        "    s.call('skills/get', {'_meta': {'io.skillwire/provenance': 1}})\n"
        "    return x.mime == 'inode/directory' or 'skills/get failed for a listed skill'\n"
    )
    assert sorted(vocabulary_literals(planted)) == [
        "inode/directory",
        "io.modelcontextprotocol/skills",
        "io.skillwire/provenance",
        "skills/get",
    ]
    assert list(params_models(planted)) == ["GetSkillParams"]


def test_protocol_names_are_spelled_only_by_their_owner() -> None:
    copies = {
        module: sorted(set(vocabulary_literals(ast.parse(path.read_text(encoding="utf-8")))))
        for module, path in MODULES.items()
        if module != PROTOCOL_OWNER
    }
    copies = {module: found for module, found in copies.items() if found}
    assert copies == {}, "import these from skillwire.core.protocol instead of writing them out"


def test_params_models_are_defined_only_in_core_params() -> None:
    models = {
        module: list(params_models(ast.parse(path.read_text(encoding="utf-8"))))
        for module, path in MODULES.items()
        if module != PARAMS_OWNER
    }
    assert {m: found for m, found in models.items() if found} == {}, "use skillwire.core.params"


def test_core_reaches_the_sdk_only_through_the_wire_types_in_core_params() -> None:
    # core/ is the protocol's rules without I/O: no `mcp` (sessions, transports), and the pure pydantic
    # wire types (`mcp_types`) only where the one params model per method is defined.
    from support.imports import EDGES

    reaching = {
        (edge.source, edge.target.split(".")[0])
        for source, edges in EDGES.items()
        if source.startswith("skillwire.core")
        for edge in edges
        if edge.target.split(".")[0] in ("mcp", "mcp_types", "pydantic")
    }
    assert reaching == {(PARAMS_OWNER, "mcp_types")}


# -- paging: one cursor codec (core/cursor.py), one client loop (client/paging.py) -----------------------------

CURSOR_OWNER = "skillwire.core.cursor"
PAGING_OWNER = "skillwire.client.paging"
# module prefix -> why it reads `nextCursor` itself
CURSOR_READERS = {
    "skillwire.checks.audit": "skillwire check walks pages by hand on purpose: each paging defect is a finding",
    "skillwire.server.resources": "a server, not a client: it carries the app's own resources/list cursor in ours",
}


def cursor_codecs(tree: ast.AST) -> Iterator[str]:
    """base64url (the cursor's text form) or an HMAC: what a second cursor codec is made of."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("urlsafe_b64encode", "urlsafe_b64decode"):
            yield node.attr
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("hmac.new", "hmac.digest"):
            yield ast.unparse(node.func)


def next_cursor_reads(tree: ast.AST) -> Iterator[str]:
    """`x.get("nextCursor")` or `x["nextCursor"]` read: a paging loop of its own."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and first.value == "nextCursor":
                yield ast.unparse(node)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = node.slice
            yield from [ast.unparse(node)] if isinstance(key, ast.Constant) and key.value == "nextCursor" else []


def test_the_paging_scanners_find_a_planted_copy() -> None:
    planted = ast.parse(
        "import base64, hmac\n"
        "def encode(key):\n    return base64.urlsafe_b64encode(key) + hmac.new(S, key, 'sha256').digest()\n"
        "async def walk(send):\n"
        "    result = await send(None)\n"
        "    while result.get('nextCursor'):\n        result = await send(result['nextCursor'])\n"
        "    result['nextCursor'] = None\n"
    )
    assert sorted(cursor_codecs(planted)) == ["hmac.new", "urlsafe_b64encode"]
    assert sorted(next_cursor_reads(planted)) == ["result.get('nextCursor')", "result['nextCursor']"]


def test_cursors_are_encoded_only_by_core_cursor() -> None:
    codecs = {
        module: sorted(set(cursor_codecs(ast.parse(path.read_text(encoding="utf-8")))))
        for module, path in MODULES.items()
        if module != CURSOR_OWNER
    }
    assert {m: found for m, found in codecs.items() if found} == {}, "use skillwire.core.cursor"


def test_pages_are_walked_only_by_client_paging() -> None:
    loops = {
        module: sorted(set(next_cursor_reads(ast.parse(path.read_text(encoding="utf-8")))))
        for module, path in MODULES.items()
        if module != PAGING_OWNER and not module.startswith(tuple(CURSOR_READERS))
    }
    assert {m: found for m, found in loops.items() if found} == {}, "walk pages with skillwire.client.paging.pages"
    assert all(any(m.startswith(prefix) for m in MODULES) for prefix in CURSOR_READERS)  # no stale entry


def keyset_slices(tree: ast.AST) -> Iterator[str]:
    """`bisect_right(keys, after)`: the start of a keyset page after a key, which `core.cursor.paginate` owns."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("bisect.bisect_right", "bisect_right", "bisect"):
            yield ast.unparse(node)


def test_the_keyset_scanner_finds_a_planted_copy() -> None:
    planted = ast.parse(
        "import bisect\nfrom bisect import bisect_right\n"
        "def page(keys, after, limit):\n"
        "    start = bisect.bisect_right(keys, after)\n    also = bisect_right(keys, after)\n"
        "    return keys[start : start + limit], bisect.bisect_left(keys, after)\n"
    )
    assert sorted(keyset_slices(planted)) == ["bisect.bisect_right(keys, after)", "bisect_right(keys, after)"]


def test_server_pages_are_sliced_only_by_core_cursor_paginate() -> None:
    # issue 38 item 5: skills/list, resources/list's SKILL.md pages and directory reads were three copies.
    slices = {
        module: sorted(set(keyset_slices(ast.parse(path.read_text(encoding="utf-8")))))
        for module, path in MODULES.items()
        if module != CURSOR_OWNER
    }
    assert {m: found for m, found in slices.items() if found} == {}, "page with skillwire.core.cursor.paginate"


# -- URI structure: core/uri.py only ---------------------------------------------------------------------------

URI_OWNER = "skillwire.core.uri"
_SCHEME_SLICES = {"index", "find", "partition", "split", "rindex", "rfind"}  # with "://"
_SLASH_SLICES = {"rfind", "rindex", "rsplit", "rpartition"}  # with "/": taking the last segment or parent
# (module, the call as written) -> why it is not a skill URI taken apart by hand
NOT_SKILL_URIS = {
    ("skillwire.host.identity", "server.split('://', 1)"): "an http(s) URL or a command line, not a skill URI",
    ("skillwire.server.content", "file_path.rsplit('/', 1)"): "a file path inside a skill, not a URI",
    ("skillwire.catalog.published", "meta['path'].rsplit('/', 1)"): "an object store key, not a URI",
    ("skillwire.catalog.git", "rest.index('://')"): "a git remote URL (git+https://HOST/...), not a skill URI",
}


def uri_slicing(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            first, method = node.args[0], node.func.attr
            if isinstance(first, ast.Constant) and (
                (first.value == "://" and method in _SCHEME_SLICES) or (first.value == "/" and method in _SLASH_SLICES)
            ):
                yield ast.unparse(node)


def test_the_uri_scanner_finds_a_planted_copy() -> None:
    planted = ast.parse("root = uri[: uri.rfind('/')]\nscheme = uri.partition('://')[0]\nparts = p.split('/')\n")
    assert sorted(uri_slicing(planted)) == ["uri.partition('://')", "uri.rfind('/')"]


def test_uris_are_taken_apart_only_by_core_uri() -> None:
    found = {
        (module, call)
        for module, path in MODULES.items()
        if module != URI_OWNER
        for call in uri_slicing(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert sorted(found - NOT_SKILL_URIS.keys()) == [], "use core/uri.py (parent_of, ancestors, lineage, ...)"
    assert sorted(NOT_SKILL_URIS.keys() - found) == []  # no stale entry


# -- "is this an absolute URI?": core/uri.is_absolute only -----------------------------------------------------------


def absolute_uri_tests(tree: ast.AST) -> Iterator[str]:
    """`"://" in text` and `"://" not in text`: a second spelling of `core.uri.is_absolute`."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Constant)
            and node.left.value == "://"
            and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops)
        ):
            yield ast.unparse(node)


def test_the_absolute_uri_scanner_finds_a_planted_copy() -> None:
    planted = ast.parse(
        "if '://' in uri:\n    pass\n"
        "ok = '://' not in ref and server\n"
        "fine = uri.endswith('://') or ':' in uri or '//' in uri\n"
    )
    assert sorted(absolute_uri_tests(planted)) == ["'://' in uri", "'://' not in ref"]


def test_only_core_uri_decides_what_an_absolute_uri_is() -> None:
    found = sorted(
        f"{module}: {test}"
        for module, path in MODULES.items()
        if module != URI_OWNER
        for test in absolute_uri_tests(ast.parse(path.read_text(encoding="utf-8")))
    )
    assert found == [], "use core.uri.is_absolute (one rule for what a URI is, not a name or a relative path)"
