"""The import graph of `src/skillwire` (issue 12): layers import only downwards, no command of the
command line imports another, no import cycle anywhere, and only the modules that read YAML import the
YAML engine. Read from the import statements (`tests/support/imports.py`), so nothing
is imported to judge it and a package `__init__` cannot hide an edge.

Every kind of import counts here: module level, deferred inside a function, and under
`if TYPE_CHECKING:`. A deferred or type-only import is still a dependency of the design (the module
names the other's types, or calls into it later); writing it inside a function only moves the moment it
runs.
"""

from __future__ import annotations

import pytest

from support.imports import EDGES, MODULES, Edge, cycles, internal_edges

# Each layer and the layers it may import (docs/architecture.md draws the same stack). `root` is the
# package `__init__`, the public surface: it may import every library layer, and nothing inside the
# package imports it. `_version` and `_deprecation` are leaves anyone may import.
LAYERS: dict[str, set[str]] = {
    "core": set(),
    "ops": {"core"},
    "search": {"core", "ops"},  # the one search engine, for the server's find_skills and the bridge's list_skills
    "catalog": {"core", "ops"},
    "client": {"core", "ops"},
    "web": {"core", "ops"},  # the catalog page: rendering over a read-only view, for serve and browse
    "server": {"core", "ops", "catalog", "search", "web"},
    "host": {"core", "ops", "catalog", "client", "search", "web"},
    "checks": {"core", "ops", "catalog", "client"},
    "bridge": {"core", "ops", "catalog", "client", "server", "host", "search"},
    "cli": {"core", "ops", "catalog", "client", "server", "host", "checks", "bridge", "search", "web"},
    "root": {"core", "catalog", "client", "server", "host", "checks", "search"},
    "__main__": {"cli"},
}
LEAVES = {"skillwire._version", "skillwire._deprecation"}


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "root"
    return parts[1].removesuffix(".py")


def crossings() -> list[Edge]:
    """Every import from one layer into another (or into the root), skillwire modules only."""
    return [
        edge
        for edges in EDGES.values()
        for edge in edges
        if edge.target in MODULES and edge.target not in LEAVES and layer_of(edge.source) != layer_of(edge.target)
    ]


def test_every_module_is_in_a_known_layer() -> None:
    unknown = sorted({m for m in MODULES if m not in LEAVES and layer_of(m) not in LAYERS})
    assert not unknown, f"add these to LAYERS (and to docs/architecture.md): {unknown}"


def test_layers_import_only_the_layers_below_them() -> None:
    upward = sorted(
        {
            f"{e.source} (line {e.line}, {e.where}) imports {e.target}"
            for e in crossings()
            if layer_of(e.target) not in LAYERS.get(layer_of(e.source), set())
        }
    )
    assert not upward, "\n".join(upward)


def test_nothing_inside_the_package_imports_its_root() -> None:
    # The root imports every layer; a module that imports it (for `__version__`, say) closes a cycle
    # through all of them. `skillwire._version` is the leaf to import instead.
    found = [f"{e.source} line {e.line}" for e in crossings() if e.target == "skillwire"]
    assert not found, found


def command_modules() -> set[str]:
    from skillwire.cli.main import COMMANDS

    return {f"skillwire.cli.{name}" for name in COMMANDS}


def test_the_commands_are_modules() -> None:
    assert command_modules() <= set(MODULES)


def test_no_command_imports_another_command() -> None:
    # What two commands share lives in a module of its own (cli/args, connect, output, resolve, fetch,
    # roots, upstreams), so a command can change without changing what another one does.
    commands = command_modules() | {"skillwire.cli.main"}
    found = sorted(
        {
            f"{e.source} (line {e.line}) imports {e.target}"
            for source in commands
            for e in EDGES[source]
            if e.target in commands and e.target != source
        }
    )
    assert not found, "\n".join(found)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("skillwire.cli.")))
def test_cli_modules_are_either_a_command_or_shared(module: str) -> None:
    # A shared module of the command line defines no `add_parser`: otherwise it would be a command
    # missing from `COMMANDS` (and `skillwire --help`).
    defines_parser = any("def add_parser(" in line for line in MODULES[module].read_text().splitlines())
    assert defines_parser == (module in command_modules()), module


# -- import cycles ------------------------------------------------------------------------------------------------


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]  # a self-import is not an edge (`internal_edges` drops it)


def test_no_import_cycle_in_the_package() -> None:
    """No two modules of `src/skillwire` import each other, directly or through others.

    Every import counts: module level, under `if TYPE_CHECKING:` (the two modules still depend on each
    other's names; `host/active.py` and `host/host.py` were a cycle hidden that way), and inside a
    function (a deferred import only postpones the cycle to the first call: `catalog/code.py` imported
    `catalog.catalog` in a method). A package `__init__` counts only for what it imports itself.
    """
    found = cycles(internal_edges("module", "type-checking", "function"))
    assert not found, "\n".join(" -> ".join(cycle) for cycle in found)


# -- the YAML engine ------------------------------------------------------------------------------------------------

# Who may import `skillwire.core.yaml` (any of its modules), and why: each one reads YAML or re-exports
# the reader. A module that needs only JSON value types or JavaScript equality imports `core/json.py`.
YAML_IMPORTERS = {
    "skillwire": "the public surface re-exports the YAML reader's functions (parse_frontmatter, ...)",
    "skillwire.core.frontmatter": "the old module, a re-export kept for code written against it",
    "skillwire.core.skill_md": "parse_skill_md reads the frontmatter block it splits off",
    "skillwire.checks.lint": "lint parses each SKILL.md's frontmatter itself, to report where it fails",
    "skillwire.checks.hazards": "walks the engine's events (core/yaml/events.py, its one public event API)",
}


def test_no_module_outside_the_yaml_engine_imports_its_private_modules() -> None:
    # Issue 38 item 3: hazards imported ten private names from four private modules; now one public API.
    private = sorted(
        f"{e.source} -> {e.target}"
        for edges in EDGES.values()
        for e in edges
        if e.target.startswith("skillwire.core.yaml._") and not e.source.startswith("skillwire.core.yaml")
    )
    assert private == [], "read the engine through skillwire.core.yaml or skillwire.core.yaml.events"


def test_only_the_listed_modules_import_the_yaml_engine() -> None:
    importers = {
        e.source
        for edges in EDGES.values()
        for e in edges
        if e.target.split(".")[:3] == ["skillwire", "core", "yaml"] and not e.source.startswith("skillwire.core.yaml")
    }
    assert sorted(importers - YAML_IMPORTERS.keys()) == [], "import JSON types from skillwire.core.json instead"
    assert sorted(YAML_IMPORTERS.keys() - importers) == [], "stale entries in YAML_IMPORTERS"
