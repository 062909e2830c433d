"""Renamed public names (issue 12) keep working under their old names, each use warning with a
`DeprecationWarning` that names the new one; the old names are not part of the surface (`__all__`)."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillwire
import skillwire.catalog.snapshot
from skillwire import ServedFileChanged, SkillCatalog, SkillHost
from skillwire.catalog.inline import InlineSkills


def test_file_changed_is_served_file_changed_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"skillwire\.FileChanged is renamed skillwire\.ServedFileChanged"):
        old = skillwire.FileChanged
    assert old is ServedFileChanged
    with pytest.warns(DeprecationWarning, match="ServedFileChanged"):
        assert skillwire.catalog.snapshot.FileChanged is ServedFileChanged
    with pytest.warns(DeprecationWarning, match=r"skillwire\.FileChanged is renamed"):
        exec("from skillwire import FileChanged", {})
    assert "FileChanged" not in skillwire.__all__
    assert "ServedFileChanged" in skillwire.__all__
    assert issubclass(ServedFileChanged, skillwire.SkillwireError)


def test_a_name_that_never_existed_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchName'"):
        _ = skillwire.NoSuchName
    with pytest.raises(ImportError):
        exec("from skillwire import AlsoMissing", {})


def test_skill_catalog_code_is_inline_with_a_warning() -> None:
    catalog = SkillCatalog()
    catalog.add_files("acme/hello", {"SKILL.md": "---\nname: hello\ndescription: Says hello.\n---\nHi.\n"})
    with pytest.warns(DeprecationWarning, match=r"SkillCatalog\.code is renamed SkillCatalog\.inline"):
        old = catalog.code
    assert old is catalog.inline
    assert isinstance(old, InlineSkills)
    assert len(old) == 1


def test_skill_host_catalog_is_available_skills_prompt_with_a_warning(tmp_path: Path) -> None:
    skill = tmp_path / "hello"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: hello\ndescription: Says hello.\n---\nHi.\n")
    host = SkillHost(use_cache=False)
    host.add_local("mine", [tmp_path])
    prompt = host.available_skills_prompt()
    assert prompt.startswith("<available_skills>\n<skill name=")
    assert "Says hello." in prompt
    with pytest.warns(
        DeprecationWarning, match=r"SkillHost\.catalog\(\) is renamed SkillHost\.available_skills_prompt"
    ):
        assert host.catalog(budget_chars=8000) == prompt
