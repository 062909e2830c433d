"""The behaviour the library API promises, against a real `skillwire serve` on 127.0.0.1: exceptions
leave `async with SkillHost(...)` as themselves, a host without a policy says so, `TaggedContent` has
`.text` and `.data`, and the README's SkillHost snippet runs as written (tests/test_public_api.py
checks the surface itself).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from skillwire import ApprovalDenied, ApproveAll, SkillHost, TaggedContent, UnlistedFile
from support.servers import EXAMPLES, REPO_ROOT

# -- behaviour, against a real server ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_an_exception_inside_the_host_block_comes_out_as_itself(examples_url: str) -> None:
    caught: BaseException | None = None
    try:  # exactly what a caller writes (pytest.raises would accept a group's member too)
        async with SkillHost(policy=ApproveAll(), use_cache=False) as host:
            await host.add_server("work", examples_url)
            skill = await host.load("work", "skill://pdf-processing/SKILL.md")
            await skill.read("references/not-listed.md")
    except UnlistedFile as refused:
        caught = refused
    assert type(caught) is UnlistedFile

    class Mine(Exception):
        pass

    mine: BaseException | None = None
    try:  # the caller's own exceptions too
        async with SkillHost(policy=ApproveAll(), use_cache=False) as host:
            await host.add_server("work", examples_url)
            raise Mine
    except Mine as raised:
        mine = raised
    assert type(mine) is Mine


@pytest.mark.anyio
async def test_a_host_without_a_policy_says_so_and_how_to_pass_one(examples_url: str) -> None:
    async with SkillHost(use_cache=False) as host:
        await host.add_server("work", examples_url)
        with pytest.raises(ApprovalDenied) as denied:
            await host.load("work", "skill://pdf-processing/SKILL.md")
    message = str(denied.value)
    assert "without a policy" in message
    assert "SkillHost(policy=" in message
    assert "ApproveAll()" in message


@pytest.mark.anyio
async def test_tagged_content_has_text_and_the_verified_bytes(examples_url: str) -> None:
    async with SkillHost(policy=ApproveAll(), use_cache=False) as host:
        await host.add_server("work", examples_url)
        skill = await host.load("work", "skill://pdf-processing/SKILL.md")
        forms = await skill.read("references/FORMS.md")
        logo = await skill.read("assets/logo.png")
    on_disk = EXAMPLES / "pdf-processing"
    assert isinstance(forms, TaggedContent)
    assert forms.text == (on_disk / "references" / "FORMS.md").read_text(encoding="utf-8")
    assert forms.data == (on_disk / "references" / "FORMS.md").read_bytes()
    assert logo.data == (on_disk / "assets" / "logo.png").read_bytes()
    assert logo.text.startswith("[binary file, ")
    assert skill.instructions.data == (on_disk / "SKILL.md").read_bytes()
    assert 'origin="work"' in forms.render()


def readme_python_block(heading: str) -> str:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index(heading) :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, f"no python block under {heading!r}"
    return match.group(1)


def test_the_readme_skillhost_snippet_runs_as_written(examples_url: str, tmp_path: Path) -> None:
    """The only change: the README's port (./scripts/serve's 8765) becomes this test server's."""
    code = readme_python_block("## Loading skills in a host")
    assert "from skillwire import" in code
    assert "skillwire.host" not in code  # the root is the API
    port = examples_url.split(":")[2].split("/")[0]
    script = tmp_path / "snippet.py"
    script.write_text(code.replace("127.0.0.1:8765", f"127.0.0.1:{port}"), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=dict(os.environ)
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "# Filling PDF forms",
        "refused: skill://pdf-processing/references/not-listed.md: not listed in the manifest of "
        "skill://pdf-processing/SKILL.md",
    ]
