"""One way to add a skill source (issue 38): a place skills come from is a `SkillSource`
(`catalog/source.py`) that `SkillCatalog` composes, never a subclass replacing the catalog's private
steps (how `GitCatalog` once added git roots: `_scan_root`, `_load_persisted`, `_build_snapshot`).

Read from the AST of `src/skillwire`, so a new subclass that overrides a private method of `SkillCatalog`,
or a new source kind in `catalog/` that lacks part of the protocol, fails here. Classes in `catalog/`
named like a source that are not one are listed with what they are; an entry that no longer matches a
class fails too, so the list stays true.
"""

from __future__ import annotations

import ast
from pathlib import Path

from skillwire.catalog.catalog import FolderSource
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.git_catalog import GitRootSource, GitRootSpec
from skillwire.catalog.inline import InlineSkills
from skillwire.catalog.source import SkillSource
from support.imports import MODULES

TREES = {module: ast.parse(path.read_text(encoding="utf-8")) for module, path in MODULES.items()}
CATALOG_MODULE = "skillwire.catalog.catalog"

# The source kinds (module -> class): each implements every member of `SkillSource`.
SOURCE_KINDS = {
    ("skillwire.catalog.catalog", "FolderSource"): "a folder on disk",
    ("skillwire.catalog.inline", "InlineSkills"): "the skills defined in Python",
    ("skillwire.catalog.git_catalog", "GitRootSource"): "a git root read from git's object database",
}
# Classes in catalog/ named like a source that are not a `SkillSource`, and what they are.
NOT_SOURCES = {
    ("skillwire.catalog.git", "GitSource"): "a git root's URL, ref and subdirectory as written (parsed, not served)",
    ("skillwire.catalog.git_tree", "GitTreeSource"): "one commit's tree, which a GitRootSource scans",
    ("skillwire.catalog.source", "SkillSource"): "the protocol itself",
}
PROTOCOL_MEMBERS = ("scan", "watch_paths", "poll", "status", "poll_seconds")


def private_methods(tree: ast.Module, class_name: str) -> set[str]:
    """The private (one underscore, not dunder) names a class defines in its body."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {name for name in defined_names(node) if name.startswith("_") and not name.startswith("__")}
    raise AssertionError(f"no class {class_name}")


def defined_names(cls: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(item.name)
        elif isinstance(item, ast.Assign):
            names |= {t.id for t in item.targets if isinstance(t, ast.Name)}
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
    return names


def base_names(cls: ast.ClassDef) -> set[str]:
    return {base.id if isinstance(base, ast.Name) else ast.unparse(base).rsplit(".", 1)[-1] for base in cls.bases}


def overrides(trees: dict[str, ast.Module], private: set[str]) -> list[str]:
    """`module.Class._name` for every class outside catalog/catalog.py, below `SkillCatalog` however deep,
    that defines one of `SkillCatalog`'s private names."""
    classes = [
        (module, node)
        for module, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and not (module == CATALOG_MODULE and node.name == "SkillCatalog")
    ]
    below = {"SkillCatalog"}
    grew = True
    while grew:  # subclasses of subclasses, to a fixed point
        grew = False
        for _, cls in classes:
            if cls.name not in below and base_names(cls) & below:
                below.add(cls.name)
                grew = True
    return sorted(
        f"{module}.{cls.name}.{name}"
        for module, cls in classes
        if cls.name in below
        for name in defined_names(cls) & private
    )


def missing_members(cls: ast.ClassDef) -> list[str]:
    """The protocol members a class defines neither in its body nor as `self.X = ...` in a method."""
    names = defined_names(cls)
    for node in ast.walk(cls):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.attr for t in targets if isinstance(t, ast.Attribute) and ast.unparse(t.value) == "self"}
    return [member for member in PROTOCOL_MEMBERS if member not in names]


def source_like(trees: dict[str, ast.Module]) -> dict[tuple[str, str], ast.ClassDef]:
    """Classes in catalog/ named like a source, or defining a `scan(self, request)` as a source does."""
    found: dict[tuple[str, str], ast.ClassDef] = {}
    for module, tree in trees.items():
        if not module.startswith("skillwire.catalog."):
            continue
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            scans = any(
                isinstance(item, ast.FunctionDef)
                and item.name == "scan"
                and [a.arg for a in item.args.args] == ["self", "request"]
                for item in node.body
            )
            if node.name.endswith("Source") or scans:
                found[(module, node.name)] = node
    return found


SKILL_CATALOG_PRIVATE = private_methods(TREES[CATALOG_MODULE], "SkillCatalog")


def test_the_override_detector_finds_a_planted_subclass() -> None:
    # The shape GitCatalog had before the protocol, and one level further down, so the scan below can fail.
    planted = ast.parse(
        "class GitCatalog(SkillCatalog):\n"
        "    def _scan_root(self, index, changed, pool, record=None): ...\n"
        "    def _load_persisted(self): return None\n"
        "    def commits(self): return {}\n"
        "class Deeper(GitCatalog):\n"
        "    def _build_snapshot(self, changed=None): ...\n"
    )
    assert {"_load_persisted", "_build_snapshot"} <= SKILL_CATALOG_PRIVATE
    assert overrides({"planted": planted}, SKILL_CATALOG_PRIVATE | {"_scan_root"}) == [
        "planted.Deeper._build_snapshot",
        "planted.GitCatalog._load_persisted",
        "planted.GitCatalog._scan_root",
    ]
    unrelated = ast.parse("class Other:\n    def _load_persisted(self): ...\n")
    assert overrides({"planted": unrelated}, SKILL_CATALOG_PRIVATE) == []


def test_no_class_overrides_a_private_method_of_skill_catalog() -> None:
    assert overrides(TREES, SKILL_CATALOG_PRIVATE) == []


def test_the_member_detector_finds_a_planted_partial_source() -> None:
    planted = ast.parse(
        "class BucketSource:\n"
        "    poll_seconds = 0.0\n"
        "    def scan(self, request): ...\n"
        "    def poll(self): return False\n"
    )
    (cls,) = source_like({"skillwire.catalog.planted": planted}).values()
    assert missing_members(cls) == ["watch_paths", "status"]
    complete = ast.parse(
        "class FolderLike:\n"
        "    def __init__(self): self.poll_seconds = 0.0\n"
        "    def scan(self, request): ...\n"
        "    def watch_paths(self): return []\n"
        "    def poll(self): return False\n"
        "    def status(self): return None\n"
    )
    (cls,) = source_like({"skillwire.catalog.planted": complete}).values()
    assert missing_members(cls) == []


def test_every_source_kind_in_catalog_implements_the_protocol() -> None:
    found = source_like(TREES)
    assert set(SOURCE_KINDS) <= set(found), "a listed source kind is gone: update SOURCE_KINDS"
    assert set(NOT_SOURCES) <= set(found), "a class listed as not a source is gone: update NOT_SOURCES"
    unlisted = sorted(f"{module}.{name}" for module, name in found if (module, name) not in SOURCE_KINDS | NOT_SOURCES)
    assert unlisted == [], "a new source kind: implement SkillSource and list it in SOURCE_KINDS"
    for key in SOURCE_KINDS:
        assert missing_members(found[key]) == [], key


def test_each_source_kind_is_a_skill_source_at_run_time(tmp_path: Path) -> None:
    kinds = [
        FolderSource(SkillRoot(tmp_path)),
        InlineSkills(),
        GitRootSource(GitRootSpec.parse(f"git+file://{tmp_path}/repo.git@main"), cache_dir=tmp_path / "cache"),
    ]
    assert {type(kind).__name__ for kind in kinds} == {name for _, name in SOURCE_KINDS}
    for kind in kinds:
        assert isinstance(kind, SkillSource), type(kind).__name__
