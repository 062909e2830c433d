"""What a `skillwire serve` start imports: only the catalog, the server and their dependencies.

Import time is most of a warm restart (the persisted snapshot loads in a fraction of it), so what the
start does not need stays out: the package root imports public names on first use, the YAML engine
waits for a SKILL.md to parse, pathspec for a `.skillignore`, sshsig for a signature. Checked in a
fresh interpreter (a test process has imported everything already); the seconds are bench.run's.
"""

from __future__ import annotations

import json
import subprocess
import sys

# Each was measured on the serve path before it was deferred (python -X importtime).
NOT_AT_START = [
    "ruamel.yaml",  # frontmatter comes decoded from the digest cache or the snapshot
    "pathspec",  # only a walk that meets a .skillignore needs it
    "sshsig",  # only signed entries
    "rich",  # the inspection commands' output
    "markdown_it",  # lint's link checks, and the catalog page's SKILL.md (at its first page)
    "jinja2",  # the catalog page's templates, at the first page asked for
    "skillwire.web.render",
    "skillwire.host",
    "skillwire.client.skills",
    "skillwire.checks",
    "skillwire.bridge",
]


def modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_the_serve_path_imports_nothing_a_start_does_not_need() -> None:
    loaded = modules_after(
        "from skillwire.cli.main import build_parser\nbuild_parser('serve')\nimport skillwire.cli.serve"
    )
    assert "skillwire.server.app" in loaded  # the control: this is the path that serves
    assert "skillwire.catalog.persist" in loaded
    early = sorted(name for name in NOT_AT_START if any(m == name or m.startswith(name + ".") for m in loaded))
    assert not early, f"imported by a serve start: {early}"


def test_importing_the_package_root_imports_no_layer() -> None:
    loaded = modules_after("import skillwire")
    assert sorted(m for m in loaded if m.startswith("skillwire")) == ["skillwire", "skillwire._version"]


def test_a_public_name_is_imported_on_first_use_and_shown_as_skillwire() -> None:
    loaded = modules_after(
        "import skillwire\nassert skillwire.SkillHost.__module__ == 'skillwire', skillwire.SkillHost\n"
        "assert not hasattr(skillwire, 'NoSuchName') and 'SkillHost' in dir(skillwire)"
    )
    assert "skillwire.host.host" in loaded
    assert "skillwire.server.app" not in loaded  # one name imports its own module, not the rest
