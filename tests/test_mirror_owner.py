"""One owner for writing skills to disk (issue 24 item 5): the crash-safe replacement of a skill folder lives in
`host/mirror/swap.py`, and "does the copy on disk still match what was written" in `host/mirror/drift.py`
(`disk_problem`). `cli/pull.py` held a swap engine and two different disk-versus-lock checks before; a new
writer of skill folders (the sync into host folders, git provenance) must reuse these, not grow a third.

Read from the AST of `src/skillwire`, like `test_rule_owners.py`: each module that renames or deletes a
directory tree, or holds bytes from disk up to a manifest item, is listed with why, and a stale entry fails.
"""

from __future__ import annotations

import ast

import pytest

from support.imports import MODULES

SWAP_OWNER = "skillwire.host.mirror.swap"
DISK_CHECK_OWNER = "skillwire.host.mirror.drift"
FILE_SET_OWNER = "skillwire.core.manifest"

# module -> why it renames (`os.rename`, `Path.rename`) or deletes a tree (`shutil.rmtree`) itself
RENAMERS = {
    SWAP_OWNER: "the owner: staging, the two renames with their journal, removal, recovery",
    "skillwire.host.cache": "the content cache's own entries (content-addressed files, not skill folders)",
    "skillwire.host.mirror.writer": "drops its staging directory after the swap (or after a failure)",
    "skillwire.host.mirror.sync": "drops its staging directory after the swap (or after a failure)",
    "skillwire.catalog.git": "the git cache's bare repository (made, remade for another object format): not skills",
    "skillwire.ops.metrics": "drops the Prometheus multi-process directory it made for --workers: metrics files",
}
# module -> why it compares bytes with a manifest item through `core.verify.file_mismatches`
MISMATCH_READERS = {
    DISK_CHECK_OWNER: "the owner: a mirror's files on disk against their lock or sync record",
    "skillwire.catalog.filesystem": "a server's scan: the SKILL.md it parsed is the one it hashed",
    "skillwire.checks.audit.reads": "the audit reports every difference of what a server sends",
}


def _name_of(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else ""
        return f"{owner}.{func.attr}" if owner in ("os", "shutil") else f".{func.attr}"
    return getattr(func, "id", "")


def tree_moves(tree: ast.AST) -> bool:
    """True when the module renames something (`os.rename`, `x.rename`) or deletes a tree (`shutil.rmtree`)."""
    return any(
        isinstance(node, ast.Call) and _name_of(node) in ("os.rename", ".rename", "shutil.rmtree")
        for node in ast.walk(tree)
    )


def checks_bytes_against_manifest(tree: ast.AST) -> bool:
    return any(
        isinstance(node, ast.Call) and _name_of(node) in ("file_mismatches", ".file_mismatches")
        for node in ast.walk(tree)
    )


TREES = {module: ast.parse(path.read_text(encoding="utf-8")) for module, path in MODULES.items()}


def test_the_detectors_find_a_copied_swap_and_disk_check() -> None:
    # The shape cli/pull.py had: a rename pair with an aside copy, and its own disk check.
    copied = ast.parse(
        "import os, shutil\n"
        "def swap(staged, target, aside):\n"
        "    os.rename(target, aside)\n"
        "    staged.rename(target)\n"
        "    shutil.rmtree(aside)\n"
        "def disk_matches(root, item):\n"
        "    return not file_mismatches(item.uri, item.size, item.digest, (root / item.path).read_bytes())\n"
    )
    assert tree_moves(copied)
    assert checks_bytes_against_manifest(copied)
    assert not tree_moves(ast.parse("import os\nos.replace(tmp, path)\n"))  # an atomic file write is not a swap


def test_only_the_listed_modules_rename_or_delete_trees() -> None:
    found = {module for module, tree in TREES.items() if tree_moves(tree)}
    assert sorted(found - RENAMERS.keys()) == [], "replace skill folders with host.mirror.swap, or list with why"
    assert sorted(RENAMERS.keys() - found) == [], "stale entries in RENAMERS"


def test_only_the_listed_modules_hold_bytes_to_a_manifest_item() -> None:
    found = {module for module, tree in TREES.items() if checks_bytes_against_manifest(tree)}
    assert sorted(found - MISMATCH_READERS.keys()) == [], "check a copy on disk with host.mirror.drift.disk_problem"
    assert sorted(MISMATCH_READERS.keys() - found) == [], "stale entries in MISMATCH_READERS"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("skillwire.cli.")))
def test_the_command_line_moves_no_skill_folder_itself(module: str) -> None:
    assert not tree_moves(TREES[module]), f"{module}: the mirror (host/mirror/) writes skill folders"


# module -> why it works out "changed" between two mappings itself (`a.keys() & b.keys()`), not through
# `core.manifest.diff_file_sets`, the one comparison of file sets (issue 38: the mirror had three copies)
KEY_INTERSECTIONS = {
    FILE_SET_OWNER: "the owner: diff_file_sets (and diff_manifests through it)",
    "skillwire.checks.audit.reads": "two raw `resources` arrays as the server sent them (any JSON), not file sets",
}


def intersects_keys(tree: ast.AST) -> bool:
    """True when the module intersects two mappings' keys (`a.keys() & b.keys()`): the 'changed' half of a diff."""

    def is_keys(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keys"

    return any(
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd) and is_keys(node.left) and is_keys(node.right)
        for node in ast.walk(tree)
    )


def test_the_detector_finds_a_copied_file_set_diff() -> None:
    copied = ast.parse(
        "def same(recorded, served):\n"
        "    before = {f.path: (f.digest, f.size) for f in recorded}\n"
        "    after = {p: (i.digest, i.size) for p, i in served}\n"
        "    return sorted(p for p in before.keys() & after.keys() if before[p] != after[p])\n"
    )
    assert intersects_keys(copied)
    assert not intersects_keys(ast.parse("new = sorted(listed.keys() - synced)\n"))  # skills, not a diff


def test_file_sets_are_compared_only_by_core_manifest() -> None:
    found = {module for module, tree in TREES.items() if intersects_keys(tree)}
    assert sorted(found - KEY_INTERSECTIONS.keys()) == [], "compare file sets with core.manifest.diff_file_sets"
    assert sorted(KEY_INTERSECTIONS.keys() - found) == [], "stale entries in KEY_INTERSECTIONS"
