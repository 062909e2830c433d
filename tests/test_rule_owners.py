"""One owner per rule (issue 12): "these bytes are the listed file" (size, then SHA-256) is decided in
`core/verify.py`, and the Agent Skills field bounds are applied in `core/fields.py` (from the numbers
`core/names.py` defines). Read from the AST of `src/skillwire`, so a new copy of either rule fails here
before it can disagree with its owner.

What counts as a copy of verification: computing a SHA-256 (`hashlib`), turning bytes into the
`sha256:` form (`sha256_digest`), or comparing anything with a size or digest (`x.size`, `x.digest`,
`["size"]`, a hash) by `==`/`!=`. Each module that does one of these for another reason is listed
below with that reason; an entry that no longer matches anything fails too, so the lists stay true.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from support.imports import MODULES

VERIFY_OWNER = "skillwire.core.verify"

# module -> why it computes a SHA-256 itself
HASHING = {
    "skillwire.core.manifest": "sha256_digest: the one function turning bytes into the SEP's `sha256:<hex>` form",
    "skillwire.catalog.digests": "hashes files while a server scans (streamed, cached by stat): makes digests only",
    "skillwire.core.signing": "the digest of the signed manifest statement, not of any file",
    "skillwire.core.cursor": "HMAC-SHA-256 over pagination cursors",
    "skillwire.catalog.published": "a published index is addressed by the SHA-256 of its own bytes, not a skill file",
    "skillwire.catalog.index_receive": "an index is checked against its own address (SHA-256) as it streams in",
    "skillwire.catalog.persist": "the persisted snapshot's file names and section checksums (a cache file of our own)",
    "skillwire.catalog.git": "the git cache's folder name (a hash of the URL), not any file's bytes",
    "skillwire.catalog.git_tree": "hashes git blobs as a server scans (streamed, cached by blob id): digests only",
    "skillwire.host.host": "the search index's file name (a hash of the origin labels), not any file's bytes",
    "skillwire.server.visibility": "`--tokens` keeps bearer tokens as their SHA-256 and compares them in constant time",
    "skillwire.server.options": "a replica's state file is named by a hash of the catalog's location, not any file",
}
# module -> why it turns bytes into a digest with `sha256_digest`
DIGEST_MAKERS = {
    VERIFY_OWNER: "the owner",
    "skillwire.core.manifest": "manifest_hash: the digest of the canonical {uri, digest, size} set",
    "skillwire.catalog.inline": "makes the manifest of skills defined in Python from their bytes",
    "skillwire.host.trust": "the bound set's marker entry for a verified signer",
}
# (module, the comparison as written) -> why it is not "these bytes are the listed file"
COMPARISONS = {
    ("skillwire.catalog.catalog", "before.digest != file.digest"): "a refresh telling changed files from two scans",
    ("skillwire.catalog.published", "received.sha256 != index_id"): "the index's own address",
    ("skillwire.catalog.index_fields", "known.digest != digest"): "an index listing one file twice, two digests",
    ("skillwire.catalog.persist", "hashlib.sha256(snapshot).hexdigest() != snapshot_sha"): "a cache file's checksum",
    ("skillwire.catalog.persist", "hashlib.sha256(walk).hexdigest() != walk_sha"): "a cache file's checksum",
    ("skillwire.catalog.store", "result.meta['size'] != file.size"): (
        "the store's metadata, refused before a body is read (the body then goes through core.verify)"
    ),
}

_DIGEST_NAMES = {"digest", "size", "hexdigest", "sha256", "sha256_digest"}


def _names_a_size_or_digest(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute) and node.attr in _DIGEST_NAMES:
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in _DIGEST_NAMES
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value in ("size", "digest")
    if isinstance(node, ast.BinOp):  # `PREFIX + hashlib.sha256(data).hexdigest()`
        return _names_a_size_or_digest(node.left) or _names_a_size_or_digest(node.right)
    return False


def size_or_digest_comparisons(tree: ast.AST) -> Iterator[str]:
    """Each `==`/`!=` between a size or digest and something that is not a literal (`size == 0` is a
    rule about sizes, not a verification)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            parts = [node.left, *node.comparators]
            if any(map(_names_a_size_or_digest, parts)) and not any(isinstance(p, ast.Constant) for p in parts):
                yield ast.unparse(node)


def uses_hashlib(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name == "hashlib" for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "hashlib":
            return True
    return False


def calls(tree: ast.AST, name: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == name:
                return True
    return False


TREES = {module: ast.parse(path.read_text(encoding="utf-8")) for module, path in MODULES.items()}


def test_the_detectors_find_a_copied_verification() -> None:
    # The shapes the six copies had before core/verify.py (issue 12), so the scan below can fail.
    copied = ast.parse(
        "import hashlib\n"
        "def check(listed, data):\n"
        "    if len(data) != listed.size or 'sha256:' + hashlib.sha256(data).hexdigest() != listed.digest:\n"
        "        raise ValueError\n"
        "    return sha256_digest(data) == item['digest']\n"
    )
    assert uses_hashlib(copied)
    assert calls(copied, "sha256_digest")
    assert sorted(size_or_digest_comparisons(copied)) == [
        "'sha256:' + hashlib.sha256(data).hexdigest() != listed.digest",
        "len(data) != listed.size",
        "sha256_digest(data) == item['digest']",
    ]
    assert not list(size_or_digest_comparisons(ast.parse("ok = file.size == 0 or digest.startswith('sha256:')")))


def test_only_the_listed_modules_compute_a_sha256() -> None:
    found = {module for module, tree in TREES.items() if uses_hashlib(tree)}
    assert found - HASHING.keys() == set(), "verify bytes with skillwire.core.verify, or list the module with why"
    assert HASHING.keys() - found == set(), "stale entries in HASHING"


def test_only_the_listed_modules_turn_bytes_into_a_digest() -> None:
    found = {module for module, tree in TREES.items() if calls(tree, "sha256_digest")}
    assert found - DIGEST_MAKERS.keys() == set(), "verify bytes with skillwire.core.verify, or list the module"
    assert DIGEST_MAKERS.keys() - found == set(), "stale entries in DIGEST_MAKERS"


def test_sizes_and_digests_are_compared_only_by_their_owner() -> None:
    found = {
        (module, comparison)
        for module, tree in TREES.items()
        if module != VERIFY_OWNER
        for comparison in size_or_digest_comparisons(tree)
    }
    assert sorted(found - COMPARISONS.keys()) == [], "call skillwire.core.verify, or list the comparison with why"
    assert sorted(COMPARISONS.keys() - found) == [], "stale entries in COMPARISONS"


# -- field rules ------------------------------------------------------------------------------------------------

FIELD_OWNER = "skillwire.core.fields"
# The bounds and the name rule, defined in core/names.py and applied by core/fields.py alone.
FIELD_RULE_NAMES = {
    "MAX_NAME_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_COMPATIBILITY_LENGTH",
    "ASCII_NAME_RE",
    "name_problem",
}
FIELD_BOUNDS = {64, 500, 1024}
FIELDS = ("name", "description", "compatibility")


def field_rule_uses(tree: ast.AST) -> Iterator[str]:
    """Imports of the field bounds, and `len(<a field>)` compared with a bound's number."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            yield from (f"imports {a.name}" for a in node.names if a.name in FIELD_RULE_NAMES)
        elif isinstance(node, ast.Attribute) and node.attr in FIELD_RULE_NAMES:
            yield f"uses {node.attr}"
        elif isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            measured = [
                p
                for p in parts
                if isinstance(p, ast.Call)
                and getattr(p.func, "id", "") == "len"
                and any(field in ast.unparse(p).lower() for field in FIELDS)
            ]
            if measured and any(isinstance(p, ast.Constant) and p.value in FIELD_BOUNDS for p in parts):
                yield ast.unparse(node)


def test_the_field_detector_finds_a_copied_bound() -> None:
    copied = ast.parse(
        "from skillwire.core.names import MAX_DESCRIPTION_LENGTH\n"
        "bad = len(fm['description']) > 1024 or len(name) > 64\n"
    )
    assert sorted(field_rule_uses(copied)) == [
        "imports MAX_DESCRIPTION_LENGTH",
        "len(fm['description']) > 1024",
        "len(name) > 64",
    ]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m not in (FIELD_OWNER, "skillwire.core.names")))
def test_field_rules_are_applied_only_in_core_fields(module: str) -> None:
    assert list(field_rule_uses(TREES[module])) == [], f"{module}: use skillwire.core.fields (field_problems)"


# -- the load decision (issue 19) ----------------------------------------------------------------------------

LOAD_OWNER = "skillwire.host.load"
# module -> why it names `bound_files` (the set an approval binds to) without deciding a load
BINDERS = {
    LOAD_OWNER: "the owner",
}
# module -> why it compares a stored approval's `manifest_hash` itself
APPROVAL_COMPARERS = {
    LOAD_OWNER: "the owner: a stored approval covers exactly the bound set",
    "skillwire.host.approvals": "ApprovalStore.check: the read-compare-revoke of one row, in one transaction",
}
_STEP_NAMES = ("limits", "trust", "bind", "approval")


def _receiver(call: ast.Call) -> str:
    return ast.unparse(call.func.value).lower() if isinstance(call.func, ast.Attribute) else ""


def load_steps(function: ast.AST) -> set[str]:
    """Which steps of "dynamic? → limits → trust policy → files bound to the approval → stored approval or
    ask" a function walks itself: `limit_problem`, a trust policy's `inspect`/`check`, `bound_files`, and a
    stored approval's lookup or `manifest_hash` comparison. (Dynamic alone is everywhere: not counted.)"""
    steps: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "limit_problem":
                steps.add("limits")
            elif name in ("inspect", "check") and "trust" in _receiver(node):
                steps.add("trust")
            elif name == "bound_files":
                steps.add("bind")
            elif name in ("get", "check") and "approval" in _receiver(node):
                steps.add("approval")
        elif isinstance(node, ast.Compare) and "manifest_hash" in ast.unparse(node):
            steps.add("approval")
    return steps


def load_decision_copies(tree: ast.AST) -> Iterator[str]:
    """Each function that walks two or more steps of the load decision by hand."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            steps = load_steps(node)
            if len(steps) >= 2:
                yield f"{node.name}: " + " → ".join(s for s in _STEP_NAMES if s in steps)


def manifest_hash_comparisons(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(
            isinstance(part, ast.Attribute) and part.attr == "manifest_hash" for part in [node.left, *node.comparators]
        ):
            yield ast.unparse(node)


def test_the_load_detector_finds_a_hand_written_decision() -> None:
    # The bridge's pre-flight and `skillwire approve` as they were before host/load.py (issue 19).
    copied = ast.parse(
        "async def preflight_load(self, server, uri):\n"
        "    if entry.is_dynamic or entry.limit_problem() is not None:\n"
        "        return LoadPreflight()\n"
        "    signature = self.host.trust.inspect(ref, entry)\n"
        "    bound = bound_files(entry, signature)\n"
        "    stored = self.approvals.get(ref)\n"
        "    if stored is not None and stored.manifest_hash == manifest_hash(bound):\n"
        "        return LoadPreflight()\n"
        "def run_approve(args):\n"
        "    problem = entry.limit_problem()\n"
        "    signature = trust_from_args(args).inspect(ref, entry)\n"
        "def lookup(store):\n"
        "    return store.get(ref)\n"
    )
    assert list(load_decision_copies(copied)) == [
        "preflight_load: limits → trust → bind → approval",
        "run_approve: limits → trust",
    ]
    assert list(manifest_hash_comparisons(copied)) == ["stored.manifest_hash == manifest_hash(bound)"]
    assert calls(copied, "bound_files")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != LOAD_OWNER))
def test_the_load_decision_is_made_only_in_host_load(module: str) -> None:
    assert list(load_decision_copies(TREES[module])) == [], f"{module}: call skillwire.host.load.plan_load"


def test_only_the_listed_modules_bind_files_or_compare_an_approval() -> None:
    binders = {module for module, tree in TREES.items() if calls(tree, "bound_files")}
    assert binders - BINDERS.keys() == set(), "use host.load.plan_load (or approval_set), or list the module with why"
    assert BINDERS.keys() - binders == set(), "stale entries in BINDERS"
    comparers = {module for module, tree in TREES.items() if list(manifest_hash_comparisons(tree))}
    assert comparers - APPROVAL_COMPARERS.keys() == set(), "use host.load.plan_load, or list the module with why"
    assert APPROVAL_COMPARERS.keys() - comparers == set(), "stale entries in APPROVAL_COMPARERS"


# -- URI-prefix scope (issue 19) -----------------------------------------------------------------------------

SCOPE_OWNER = "skillwire.core.uri"
# (module, the match as written) -> why it is not a second copy of "equal, or below at a `/` boundary"
PREFIX_MATCHES = {
    ("skillwire.catalog.catalog", "uri.startswith(below)"): (
        "a watcher refresh filters every file of the catalog per event: `str.startswith` over a tuple of "
        "`uri_for(...) + '/'` keeps the same rule (equal is tested beside it) in C, on canonical URIs it built"
    ),
}


def uri_prefix_matches(tree: ast.AST) -> Iterator[str]:
    """Each `startswith`/`removeprefix` on a URI (the receiver names one) against a computed prefix: the
    shape of every hand-written scope match (`uri.startswith(prefix)`, `f.uri.startswith(root + '/')`)."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "removeprefix")
            and node.args
            and not isinstance(node.args[0], ast.Constant)
            and "uri" in ast.unparse(node.func.value).lower()
        ):
            yield ast.unparse(node)


def test_the_prefix_detector_finds_a_hand_written_scope() -> None:
    # trust scope and the bridge's directory test as they were before issue 19
    copied = ast.parse(
        "covered = any(ref.uri.startswith(prefix) for prefix in self.prefixes)\n"
        "inside = any(f.uri.startswith(uri + '/') for f in files)\n"
        "rest = file_uri.removeprefix(root)\n"
        "fine = url.startswith(('http://', 'https://')) or uri.startswith('skill://')\n"
    )
    assert sorted(uri_prefix_matches(copied)) == [
        "f.uri.startswith(uri + '/')",
        "file_uri.removeprefix(root)",
        "ref.uri.startswith(prefix)",
    ]


def test_uri_prefixes_are_matched_only_by_core_uri() -> None:
    found = {
        (module, match) for module, tree in TREES.items() if module != SCOPE_OWNER for match in uri_prefix_matches(tree)
    }
    assert sorted(found - PREFIX_MATCHES.keys()) == [], "use skillwire.core.uri.in_scope, or list the match with why"
    assert sorted(PREFIX_MATCHES.keys() - found) == [], "stale entries in PREFIX_MATCHES"


# -- the cross-origin read gate (issue 19, defect 5) -----------------------------------------------------------

GATE_OWNER = "skillwire.host.gate"
# (module, the expression) -> why it is not a gate
GATE_LOOKALIKES = {
    ("skillwire.host.tool_reads", "skill.ref.origin != server"): "filters the registry's listed skills by server",
}


def cross_origin_decisions(tree: ast.AST) -> Iterator[str]:
    """The two shapes of a hand-made gate: building the question (`CrossOriginRead(acting.ref, server, uri)`,
    as the bridge's pre-flight did) and judging a read by one loaded skill's origin (`acting.ref.origin !=
    server`, as the model tools did with the last loaded skill)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "CrossOriginRead":
            yield ast.unparse(node)
        if (
            isinstance(node, ast.Compare)
            and any(isinstance(op, ast.NotEq) for op in node.ops)
            and any(ast.unparse(part).endswith(".ref.origin") for part in (node.left, *node.comparators))
        ):
            yield ast.unparse(node)


def test_the_gate_detector_finds_the_old_copies() -> None:
    # The bridge's pre-flight and the tools' autoload check as they were before defect 5 was fixed.
    copied = ast.parse(
        "acting = next((s for s in reversed(self.host.active) if s.active), None)\n"
        "if acting is None or acting.ref.origin == server:\n    pass\n"
        "if acting is not None and acting.ref.origin != server:\n    pass\n"
        "question = read_question(CrossOriginRead(acting.ref, server, uri))\n"
    )
    assert sorted(cross_origin_decisions(copied)) == [
        "CrossOriginRead(acting.ref, server, uri)",
        ["acting is not None", "acting.ref.origin != server"][1],
    ]


def test_the_cross_origin_gate_is_decided_only_in_host_gate() -> None:
    found = {
        (module, text)
        for module, tree in TREES.items()
        if module != GATE_OWNER
        for text in cross_origin_decisions(tree)
    }
    assert sorted(found - GATE_LOOKALIKES.keys()) == [], (
        "call skillwire.host.gate.cross_origin_read, or list it with why"
    )
    assert sorted(GATE_LOOKALIKES.keys() - found) == [], "stale entries in GATE_LOOKALIKES"
