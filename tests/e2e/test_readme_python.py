"""Every ```python block of the README runs as written (issue 20: `from skillwire import TrustStore` was an
ImportError in the signing section). Each block is a script of its own in a fresh folder holding the README's
`./skills` (the bundled examples) and an empty home, so nothing of this machine's configuration is read.
The SkillHost block needs a server and is run, with its output checked, by
tests/e2e/test_public_api_behaviour.py::test_the_readme_skillhost_snippet_runs_as_written; this test fails
if a block is neither run here nor there."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from support.servers import EXAMPLES, REPO_ROOT

RUN_ELSEWHERE = {"## Loading skills in a host": "test_public_api_behaviour.py"}


def python_blocks() -> list[tuple[str, str]]:
    """(the heading above it, the code) for each python block, in README order; indented blocks too."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    blocks: list[tuple[str, str]] = []
    for match in re.finditer(r"^( *)```python\n(.*?)^\1```", readme, re.DOTALL | re.MULTILINE):
        headings = re.findall(r"^#+ .*$", readme[: match.start()], re.MULTILINE)
        blocks.append((headings[-1] if headings else "", textwrap.dedent(match.group(2))))
    return blocks


def test_the_readme_has_the_blocks_issue_20_names() -> None:
    code = "\n".join(c for _, c in python_blocks())
    assert "TrustStore" in code
    assert "PerCallerSkills" in code
    assert "SkillsExtension" in code
    assert len(python_blocks()) >= 5


@pytest.mark.parametrize(("heading", "code"), python_blocks(), ids=[f"block{i}" for i, _ in enumerate(python_blocks())])
def test_a_readme_python_block_runs_as_written(heading: str, code: str, tmp_path: Path) -> None:
    elsewhere = [test for prefix, test in RUN_ELSEWHERE.items() if heading.startswith(prefix)]
    if elsewhere:
        pytest.skip(f"needs a server; run by {elsewhere[0]}")
    shutil.copytree(EXAMPLES, tmp_path / "skills")
    (tmp_path / "home").mkdir()
    script = tmp_path / "snippet.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, f"{heading}:\n{code}\n{done.stderr}"
