"""`skillwire lint`: every defect of the server's bad-input fixtures is flagged with its rule, file and
line; each YAML 1.1-vs-1.2 interop hazard is a warning on its line; `--strict`, `--quiet` and the
three formats behave; the bundled examples lint clean; a real corpus lints without crashing."""

from __future__ import annotations

import builtins
import io
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from skillwire.catalog.catalog import SkillCatalog
from skillwire.checks.findings import Finding
from skillwire.checks.links import MISSING, Target, check_links
from skillwire.checks.lint import RULES, check_skill_md, key_lines, lint_path
from skillwire.cli.lint import format_github_line, print_text
from skillwire.cli.main import main
from skillwire.cli.output import Output
from skillwire.cli.serve import bundled_examples
from support.skills import skill_md, write_file, write_skill

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "awesome-copilot" / "skills"


def sparse(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["lint", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def lint_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, _ = run(capsys, "--format", "json", *args)
    data = json.loads(out)
    assert isinstance(data, list)
    return code, data


def triples(findings: list[dict[str, Any]]) -> set[tuple[str, str, int | None]]:
    return {(f["rule"], f["file"], f["line"]) for f in findings}


def rules_of(findings: list[dict[str, Any]], file: Path | str | None = None) -> list[str]:
    return [f["rule"] for f in findings if file is None or f["file"] == str(file)]


# -- the bad-input fixtures of the server issue -------------------------------------------------------------

SKILL_MD_DEFECTS: list[tuple[str, str | bytes, str, int]] = [
    ("no-frontmatter", "# Just markdown\n\nNo frontmatter here.\n", "no-frontmatter", 1),
    ("bad-yaml", "---\nname: bad-yaml\ndescription: [unclosed\n---\n", "yaml-syntax", 4),
    ("duplicate-key", "---\nname: duplicate-key\ndescription: a\ndescription: b\n---\n", "duplicate-key", 4),
    ("not-closed", "---\nname: not-closed\ndescription: d\n# body, no closing line\n", "unclosed-frontmatter", 1),
    ("name-mismatch", skill_md("another-name"), "name-mismatch", 2),
    ("missing-name", "---\ndescription: No name.\n---\n", "missing-name", 1),
    ("missing-description", "---\nname: missing-description\n---\n", "missing-description", 1),
    ("long-description", skill_md("long-description", "x" * 1025), "description-too-long", 3),
    ("My_Skill", skill_md("My_Skill"), "invalid-name", 2),
    ("not-utf8", b"---\nname: not-utf8\ndescription: caf\xe9\n---\n", "not-utf8", 3),
    ("empty-description", skill_md("empty-description", "''"), "empty-description", 3),
    ("list-frontmatter", "---\n- name\n- description\n---\n", "frontmatter-not-mapping", 2),
    ("name-number", skill_md("1.5"), "name-not-string", 2),
    ("description-number", skill_md("description-number", "42"), "description-not-string", 3),
    ("blank-before", "\n---\nname: blank-before\ndescription: d\n---\n", "no-frontmatter", 1),
]


@pytest.mark.parametrize(("folder", "content", "rule", "line"), SKILL_MD_DEFECTS, ids=[c[0] for c in SKILL_MD_DEFECTS])
def test_each_broken_skill_md_is_flagged_with_rule_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], folder: str, content: str | bytes, rule: str, line: int
) -> None:
    write_skill(tmp_path, "good", {"ref.md": "good reference"})
    write_file(tmp_path / folder / "SKILL.md", content)
    write_file(tmp_path / folder / "extra.md", "never published")
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1
    skill_file = str(tmp_path / folder / "SKILL.md")
    assert (rule, skill_file, line) in triples(findings)
    assert RULES[rule][0] == "error"
    assert all(f["file"].startswith(str(tmp_path / folder)) for f in findings if f["severity"] == "error")
    assert not [f for f in findings if f["skill"] == str(tmp_path / "good")]  # the good skill is clean
    for finding in findings:
        assert finding["message"]
        assert finding["suggestion"]
        assert set(finding) == {"file", "line", "severity", "rule", "message", "suggestion", "skill"}


def test_yaml_errors_carry_the_parsers_line_and_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_file(tmp_path / "tabbed" / "SKILL.md", "---\nname: tabbed\ndescription: d\nmetadata:\n\tversion: x\n---\n")
    write_file(tmp_path / "colon" / "SKILL.md", "---\nname: colon\ndescription: a: b\n---\n")
    _, findings = lint_json(capsys, str(tmp_path))
    by_file = {f["file"]: f for f in findings if f["rule"] == "yaml-syntax"}
    assert by_file[str(tmp_path / "tabbed" / "SKILL.md")]["line"] == 5
    assert "tab" in by_file[str(tmp_path / "tabbed" / "SKILL.md")]["message"]
    assert by_file[str(tmp_path / "colon" / "SKILL.md")]["line"] == 3


def test_duplicate_key_names_the_key_and_first_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_file(tmp_path / "dup" / "SKILL.md", "---\nname: dup\ndescription: a\nlicense: MIT\ndescription: b\n---\n")
    _, findings = lint_json(capsys, str(tmp_path))
    [dup] = [f for f in findings if f["rule"] == "duplicate-key"]
    assert dup["line"] == 5
    assert "'description'" in dup["message"]
    assert "line 3" in dup["message"]


def test_over_512_files_is_an_error_and_512_is_fine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(tmp_path, "crowded", {f"f/{i:03}.md": "x" for i in range(512)})  # 513 with SKILL.md
    write_skill(tmp_path, "full", {f"f/{i:03}.md": "x" for i in range(511)})  # exactly 512
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1
    assert triples(findings) == {("too-many-files", str(tmp_path / "crowded" / "SKILL.md"), None)}
    assert "513 files" in findings[0]["message"]


def test_ignored_files_do_not_count_toward_the_limits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(tmp_path, "s", {"ok.md": "fine"})
    for i in range(600):
        write_file(folder / ".git" / "objects" / f"{i:03}", "x")
    write_file(folder / ".skillignore", "build/\n")
    for i in range(600):
        write_file(folder / "build" / f"{i:03}.o", "x")
    sparse(folder / "build" / "huge.bin", 32 * 1024 * 1024)
    code, findings = lint_json(capsys, str(tmp_path))
    assert (code, findings) == (0, [])


def test_over_16_mib_is_an_error_and_exactly_16_mib_is_fine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    heavy = write_skill(tmp_path, "heavy")
    sparse(heavy / "a.bin", 8 * 1024 * 1024)
    sparse(heavy / "b.bin", 8 * 1024 * 1024)
    edge = write_skill(tmp_path, "edge")
    sparse(edge / "fill.bin", 16 * 1024 * 1024 - (edge / "SKILL.md").stat().st_size)
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1
    assert triples(findings) == {("too-large", str(heavy / "SKILL.md"), None)}
    assert "16,777,216" in findings[0]["message"]


def test_a_300_mb_sparse_file_is_flagged_without_being_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = write_skill(tmp_path, "huge")
    sparse(huge / "dump.bin", 300 * 1024 * 1024)
    opened: list[str] = []
    real_os_open, real_open = os.open, builtins.open

    def spy_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append(os.fsdecode(path))
        return real_os_open(path, flags, *args, **kwargs)

    def spy_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, bytes, os.PathLike)):
            opened.append(os.fsdecode(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr(builtins, "open", spy_open)
    started = time.perf_counter()
    report = lint_path(str(tmp_path))
    elapsed = time.perf_counter() - started
    [finding] = report.findings
    assert (finding.rule, finding.file, finding.line) == ("too-large", str(huge / "SKILL.md"), None)
    assert "314,57" in finding.message
    assert "dump.bin (314,572,800 bytes)" in finding.message
    assert not [p for p in opened if p.endswith("dump.bin")]
    assert any(p.endswith("SKILL.md") for p in opened)  # the spy does see what lint opens
    assert elapsed < 5.0


def test_symlinks_out_of_the_folder_are_warnings_and_never_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = write_file(tmp_path / "outside" / "secret.txt", "TOP-SECRET")
    root = tmp_path / "skills"
    folder = write_skill(root, "linker", {"ok.md": "ok", ".env": "KEY=1"})
    os.symlink(outside, folder / "leak.txt")
    os.symlink("../../outside/secret.txt", folder / "relative-leak.txt")
    os.symlink(".env", folder / "config.txt")
    os.symlink(root / "linker" / "ok.md", folder / "inside.md")  # inside the folder: served, fine
    dirs = write_skill(root, "dirs")
    os.symlink(root / "linker", dirs / "dir-link")
    os.symlink(dirs / "missing.md", dirs / "dangling.md")
    code, findings = lint_json(capsys, str(root))
    assert code == 0  # warnings only
    assert triples(findings) == {
        ("symlink-outside", str(folder / "leak.txt"), None),
        ("symlink-outside", str(folder / "relative-leak.txt"), None),
        ("symlink-to-ignored", str(folder / "config.txt"), None),
        ("symlinked-directory", str(dirs / "dir-link"), None),
        ("dangling-symlink", str(dirs / "dangling.md"), None),
    }
    assert all(f["severity"] == "warning" for f in findings)
    assert "TOP-SECRET" not in json.dumps(findings)
    code, _ = lint_json(capsys, "--strict", str(root))
    assert code == 1


def _lint_with_timeout(*args: str, seconds: float = 10.0) -> int:
    box: list[int] = []
    worker = threading.Thread(target=lambda: box.append(main(["lint", *args])), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "lint blocked"
    return box[0]


def test_fifos_are_warned_about_and_never_opened(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(tmp_path, "piped", {"ok.md": "ok"})
    os.mkfifo(folder / "pipe")
    os.symlink("pipe", folder / "pipe-link")
    assert _lint_with_timeout("--format", "json", str(tmp_path)) == 0
    findings = json.loads(capsys.readouterr().out)
    assert triples(findings) == {
        ("special-file", str(folder / "pipe"), None),
        ("special-file", str(folder / "pipe-link"), None),
    }


def test_a_fifo_skillignore_is_an_error_and_does_not_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(tmp_path, "piped", {"secret.md": "x"})
    write_skill(tmp_path, "good")
    os.mkfifo(folder / ".skillignore")
    assert _lint_with_timeout("--format", "json", str(tmp_path)) == 1
    findings = json.loads(capsys.readouterr().out)
    assert triples(findings) == {("unusable-skillignore", str(folder / ".skillignore"), None)}
    assert "not a regular file; its folder is not published" in findings[0]["message"]


@pytest.mark.parametrize("content", ["!\n", "[z-a]\n", b"caf\xe9\n"], ids=["bare-negation", "bad-range", "not-utf8"])
def test_unusable_skillignore_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str) -> None:
    folder = write_skill(tmp_path, "guarded")
    write_file(folder / ".skillignore", content)
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1
    assert ("unusable-skillignore", str(folder / ".skillignore"), None) in triples(findings)


def test_skillignore_symlinked_out_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = write_file(tmp_path / "outside" / "ignore", "nothing\n")
    root = tmp_path / "skills"
    folder = write_skill(root, "linked")
    os.symlink(outside, folder / ".skillignore")
    _, findings = lint_json(capsys, str(root))
    assert ("unusable-skillignore", str(folder / ".skillignore"), None) in triples(findings)


def test_skill_md_at_the_top_without_a_prefix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "skills"
    write_skill(root, "good", {"ref.md": "good reference"})
    write_file(root / "SKILL.md", skill_md("skills"))
    code, findings = lint_json(capsys, str(root))
    assert code == 0
    assert triples(findings) == {
        ("skill-at-root", str(root / "SKILL.md"), None),
        ("nested-skill", str(root / "good" / "SKILL.md"), None),
    }
    [at_root] = [f for f in findings if f["rule"] == "skill-at-root"]
    assert f"{root}=skills" in at_root["suggestion"]
    # With a prefix ending in its name, as `serve` would need, it is just a skill.
    code, findings = lint_json(capsys, f"{root}=skills")
    assert rules_of(findings) == ["nested-skill"]
    # With a prefix ending in another name, the name no longer matches the final URI segment.
    code, findings = lint_json(capsys, f"{root}=acme/tools")
    assert code == 1
    assert ("name-mismatch", str(root / "SKILL.md"), 2) in triples(findings)


def test_a_skill_md_path_lints_its_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(tmp_path, "solo", {"ref.md": "r"})
    code, findings = lint_json(capsys, str(folder / "SKILL.md"))
    assert code == 0
    assert rules_of(findings) == ["skill-at-root"]


def test_unreadable_subdirectory_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = write_skill(tmp_path, "locked") / "private"
    write_file(locked / "x.md", "x")
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:  # as if chmod 0 (which root would not notice)
        if os.fspath(path) == os.path.realpath(locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 0
    assert rules_of(findings) == ["unreadable"]
    assert findings[0]["skill"] == str(tmp_path / "locked")
    assert "Permission denied" in findings[0]["message"]


def test_unpublishable_file_names_are_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(tmp_path, "names", {"bell\x07.md": "x", "back\\slash.md": "y", "fine name (1).md": "z"})
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1
    assert sorted(f["file"] for f in findings) == sorted([str(folder / "back\\slash.md"), str(folder / "bell\\x07.md")])
    assert set(rules_of(findings)) == {"unpublishable-name"}


def test_undecodable_file_names_are_printable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(tmp_path, "bytes")
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.md"), "wb") as handle:
        handle.write(b"x")
    code, out, _ = run(capsys, str(tmp_path))
    assert code == 1
    assert "unpublishable-name" in out
    assert "caf\\udce9.md" in out


# -- Agent Skills fields and SEP serving rules ---------------------------------------------------------------


def test_fields_beyond_name_and_description(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = (
        f"compatibility: {'c' * 501}\n"
        "license: 2\n"
        "allowed-tools:\n  - Read\n  - Write\n"
        "argument-hint: '[file]'\n"
        "user-invocable: 'true'\n"
        "metadata:\n  io.modelcontextprotocol/owner: me\n  owner: me\n"
    )
    folder = write_skill(tmp_path, "fields", extra=extra)
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1
    file = str(folder / "SKILL.md")
    assert triples(findings) == {
        ("compatibility-too-long", file, 4),
        ("license-not-string", file, 5),
        ("allowed-tools-not-string", file, 6),
        ("unknown-key", file, 9),
        ("unknown-key", file, 10),
        ("reserved-metadata-key", file, 12),
    }
    unknown = [f["message"] for f in findings if f["rule"] == "unknown-key"]
    assert "'argument-hint'" in unknown[0]
    assert "'user-invocable'" in unknown[1]
    assert all("skills-ref" in m for m in unknown)
    [tools] = [f for f in findings if f["rule"] == "allowed-tools-not-string"]
    assert "'Read Write'" in tools["suggestion"]


@pytest.mark.parametrize(
    ("extra", "rule", "line"),
    [
        ("compatibility: 5\n", "compatibility-not-string", 4),
        ("compatibility: ''\n", "compatibility-empty", 4),
        ("metadata: [a, b]\n", "metadata-not-mapping", 4),
        ("metadata: just text\n", "metadata-not-mapping", 4),
        ("metadata: {owner: me, count: 3}\n", "metadata-not-string", 4),
        ("metadata:\n  acme.io/count: 3\n", "metadata-not-string", 5),
    ],
)
def test_field_types(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str, rule: str, line: int) -> None:
    folder = write_skill(tmp_path, "typed", extra=extra)
    _, findings = lint_json(capsys, str(tmp_path))
    assert triples(findings) == {(rule, str(folder / "SKILL.md"), line)}


def test_list_valued_metadata_is_an_error_as_serve_skips_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(tmp_path, "keywords", extra="metadata:\n  trigger-keywords: [pdf, forms]\n  owner: me\n")
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1
    assert [(f["rule"], f["severity"], f["line"]) for f in findings] == [("metadata-not-string", "error", 5)]
    assert findings[0]["message"] == (
        "metadata.trigger-keywords must be a string (Agent Skills metadata values are strings), not a list"
    )
    assert SkillCatalog([tmp_path]).snapshot.skipped[0].location == str(folder)


def test_interop_hazard_inside_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(tmp_path, "listed", extra="allowed-tools:\n  - Read\n  - on\n")
    _, findings = lint_json(capsys, str(tmp_path))
    file = str(folder / "SKILL.md")
    assert triples(findings) == {("allowed-tools-not-string", file, 4), ("yaml-bool", file, 6)}
    [hazard] = [f for f in findings if f["rule"] == "yaml-bool"]
    assert hazard["message"].startswith("allowed-tools[1]: 'on' is a string in YAML 1.2")
    assert hazard["suggestion"] == 'quote it, e.g. - "on"'


def test_name_rules_ascii_and_unicode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cafe = write_skill(tmp_path, "café")
    long_name = "a" * 65
    longish = write_skill(tmp_path, long_name)
    dashes = write_skill(tmp_path, "double--dash")
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1
    assert triples(findings) == {
        ("unicode-name", str(cafe / "SKILL.md"), 2),
        ("invalid-name", str(longish / "SKILL.md"), 2),
        ("invalid-name", str(dashes / "SKILL.md"), 2),
    }
    [unicode] = [f for f in findings if f["rule"] == "unicode-name"]
    assert unicode["severity"] == "error"  # skillwire serve does not publish it
    assert "SEP-2640 conformance regex" in unicode["message"]
    assert "'cafe'" in unicode["suggestion"]


def test_a_unicode_name_fails_as_serve_skips_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(tmp_path, "мой-навык")
    assert run(capsys, str(tmp_path))[0] == 1
    assert SkillCatalog([tmp_path]).snapshot.skipped[0].location == str(folder)


def test_nested_skills_are_info_and_their_files_count_in_the_parent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outer = write_skill(tmp_path, "outer", {f"o/{i:03}.md": "x" for i in range(300)})
    inner = write_skill(tmp_path, "outer/inner", {f"i/{i:03}.md": "x" for i in range(300)})
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1
    assert triples(findings) == {
        ("too-many-files", str(outer / "SKILL.md"), None),
        ("nested-skill", str(inner / "SKILL.md"), None),
    }
    by_rule = {f["rule"]: f for f in findings}
    assert "602 files, including 1 nested skill(s)" in by_rule["too-many-files"]["message"]
    assert by_rule["nested-skill"]["severity"] == "info"
    assert "skill://outer/inner/SKILL.md" in by_rule["nested-skill"]["message"]


def test_duplicate_names_and_lowercase_skill_md(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_skill(tmp_path, "a/tool")
    b = write_skill(tmp_path, "b/tool")
    write_file(tmp_path / "c" / "lower" / "skill.md", skill_md("lower"))
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 0
    assert triples(findings) == {
        ("duplicate-name", str(a / "SKILL.md"), None),
        ("duplicate-name", str(b / "SKILL.md"), None),
        ("lowercase-skill-md", str(tmp_path / "c" / "lower" / "skill.md"), None),
    }


def test_no_skills_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_file(tmp_path / "README.md", "nothing here")
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1
    assert triples(findings) == {("no-skills", str(tmp_path), None)}


def test_long_skill_md_is_a_warning_at_line_501(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(tmp_path, "long", body="# long\n" + "line\n" * 495)  # 5 frontmatter/heading lines + 495 = 500
    assert lint_json(capsys, str(tmp_path)) == (0, [])
    write_file(folder / "SKILL.md", skill_md("long", body="# long\n" + "line\n" * 496))
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 0
    assert triples(findings) == {("skill-md-too-long", str(folder / "SKILL.md"), 501)}
    assert "501 lines" in findings[0]["message"]


def test_skills_ref_interop_bom_dashes_and_dots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bom = write_file(tmp_path / "bom" / "SKILL.md", "\ufeff" + skill_md("bom"))
    dashes = write_file(tmp_path / "dashes" / "SKILL.md", skill_md("dashes", "'before --- after'"))
    dots = write_file(tmp_path / "dots" / "SKILL.md", "---\nname: dots\ndescription: d\n...\n# body\n")
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 0
    assert triples(findings) == {
        ("bom", str(bom), 1),
        ("dashes-in-frontmatter", str(dashes), 3),
        ("closing-dots", str(dots), 4),
    }


# -- links in the SKILL.md body ---------------------------------------------------------------------------

LINKS_BODY = """
See [the guide](references/guide.md), ![logo](assets/logo%20v2.png) and [a folder](references/).
Also [with a fragment](references/guide.md#setup "Title") and [the web](https://example.com/x.md).
Broken: [nope](references/missing.md) and [case](References/Guide.md).
Escaping: [up](../outside.md) and [deep up](references/../../x.md).
Hidden: [secret](.env) and [pipe](pipe).
`[in code](missing-in-code.md)` and [absolute](/etc/passwd).

```markdown
[in a fence](missing-in-fence.md)
```

[ref]: scripts/run.sh
[missing-ref]: <scripts/missing one.sh>
[anchor](#section) [mail](mailto:a@example.com) [./](./)
"""


def test_relative_links_are_checked_against_what_is_served(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(
        tmp_path,
        "linked",
        {"references/guide.md": "g", "assets/logo v2.png": b"\x89PNG", "scripts/run.sh": "#!/bin/sh\n", ".env": "K=1"},
        body="# linked\n" + LINKS_BODY,
    )
    os.mkfifo(folder / "pipe")
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1
    file = str(folder / "SKILL.md")
    # '# linked' is line 5 and the body's first (blank) line is 6.
    assert triples(findings) == {
        ("broken-link", file, 9),
        ("link-escapes", file, 10),
        ("link-not-served", file, 11),
        ("absolute-link", file, 12),
        ("broken-link", file, 19),
        ("special-file", str(folder / "pipe"), None),
    }
    broken = [f for f in findings if f["rule"] == "broken-link"]
    assert len(broken) == 3
    assert any("did you mean 'references/guide.md'" in f["suggestion"] for f in broken)
    escapes = [f for f in findings if f["rule"] == "link-escapes"]
    assert len(escapes) == 2
    not_served = [f for f in findings if f["rule"] == "link-not-served"]
    assert len(not_served) == 2
    assert any("not a regular file" in f["message"] for f in not_served)
    assert any("ignored by name" in f["message"] for f in not_served)


def test_a_nested_skill_resolves_links_against_its_own_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    links = "[inner](inner/ref.md) [inner skill](inner/SKILL.md)\n"
    write_skill(tmp_path, "outer", {"guide.md": "g"}, body="# outer\n" + links)
    inner = write_skill(tmp_path, "outer/inner", {"ref.md": "r"}, body="# inner\n[ok](ref.md)\n[parent](../guide.md)\n")
    _, findings = lint_json(capsys, str(tmp_path))
    assert triples(findings) == {
        ("nested-skill", str(inner / "SKILL.md"), None),
        ("link-escapes", str(inner / "SKILL.md"), 7),
    }


def test_check_links_is_pure() -> None:
    seen: list[tuple[str, ...]] = []

    def target(path: tuple[str, ...]) -> Target:
        seen.append(path)
        return "file" if path == ("a", "b.md") else MISSING

    found = check_links("[x](./a/c/../b.md)\n[y](a/z.md)\n", 10, target, file="S/SKILL.md")
    assert seen == [("a", "b.md"), ("a", "z.md")]
    assert [(f.rule, f.line) for f in found] == [("broken-link", 11)]


# -- interop warnings --------------------------------------------------------------------------------------

INTEROP = """---
name: interop
description: Frontmatter that YAML 1.1 and 1.2 parsers read differently.
metadata:
  reviewed: yes
  enabled: on
  released: 2024-01-01
  mode: 0o17
  perms: 010
  version: 1.10
  build: 7
  flags: [a, b]
  nested: {a: b}
  fine: "1.10"
---
# Interop
"""

INTEROP_EXPECTED = [
    (5, "yaml-bool", "metadata.reviewed", 'reviewed: "yes"'),
    (6, "yaml-bool", "metadata.enabled", 'enabled: "on"'),
    (7, "yaml-date", "metadata.released", 'released: "2024-01-01"'),
    # A value YAML 1.2 reads as a number is not a string: an error (serve skips the skill) besides the hazard.
    (8, "metadata-not-string", "metadata.mode", "quote it as written"),
    (8, "yaml-octal", "metadata.mode", 'mode: "0o17"'),
    (9, "metadata-not-string", "metadata.perms", "quote it as written"),
    (9, "yaml-octal", "metadata.perms", 'perms: "010"'),
    (10, "metadata-not-string", "metadata.version", "quote it as written"),
    (10, "yaml-number-text", "metadata.version", 'version: "1.10"'),
    (11, "metadata-not-string", "metadata.build", 'build: "7"'),
    (12, "metadata-not-string", "metadata.flags", "one string"),
    (13, "metadata-not-string", "metadata.nested", "one string"),
]


def test_each_interop_warning_is_flagged_on_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_file(tmp_path / "interop" / "SKILL.md", INTEROP).parent
    code, findings = lint_json(capsys, str(tmp_path))
    assert code == 1  # non-string metadata values are errors
    file = str(folder / "SKILL.md")
    got = [(f["line"], f["rule"]) for f in findings]
    assert got == [(line, rule) for line, rule, _, _ in INTEROP_EXPECTED]
    for finding, (_, rule, path, suggestion) in zip(findings, INTEROP_EXPECTED, strict=True):
        assert finding["file"] == file
        assert finding["severity"] == ("error" if rule.startswith("metadata-") else "warning")
        assert finding["message"].startswith(path + (" must be a string" if rule.startswith("metadata-") else ": "))
        assert suggestion in finding["suggestion"]
    assert "the octal number 8" in findings[6]["message"]
    assert "the number 1.1" in findings[8]["message"]


def test_interop_warnings_on_top_level_keys_and_key_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "---\nname: top\ndescription: yes\nlicense: 2024-01-01\ncompatibility: on\n---\n"
    write_file(tmp_path / "top" / "SKILL.md", text)
    _, findings = lint_json(capsys, str(tmp_path))
    assert [(f["line"], f["rule"]) for f in findings] == [(3, "yaml-bool"), (4, "yaml-date"), (5, "yaml-bool")]


def test_key_lines_block_flow_quoted_and_fallback() -> None:
    text = 'name: x\n"description": >\n  folded\n  text\nmetadata: {a: 1,\n  b: 2}\nlicense: MIT\n'
    assert key_lines(text, 2) == {
        ("name",): 2,
        ("description",): 3,
        ("metadata",): 6,
        ("metadata", "a"): 6,
        ("metadata", "b"): 7,
        ("license",): 8,
    }
    # Tabs between tokens are YAML 1.2; ruamel's stock scanner refuses them, so key lines come from the
    # engine's own corrected events (before, a line-regex fallback lost the keys below the top level).
    assert key_lines("name:\tx\n'desc ription': y\nmetadata:\n  a:\tb\n", 2) == {
        ("name",): 2,
        ("desc ription",): 3,
        ("metadata",): 4,
        ("metadata", "a"): 5,
    }
    assert key_lines("a: [b", 2) == {}  # what the YAML reader refuses has no key lines


def test_check_skill_md_is_pure() -> None:
    checked = check_skill_md(b"---\nname: x\ndescription: d\n---\nbody\n", file="x/SKILL.md", expected_name="x")
    assert checked.findings == []
    assert checked.frontmatter == {"name": "x", "description": "d"}
    assert (checked.body, checked.body_start_line) == ("body\n", 5)
    checked = check_skill_md(b"---\nname: other\ndescription: d\n---\n", file="x/SKILL.md", expected_name="x")
    assert [(f.rule, f.line, f.severity) for f in checked.findings] == [("name-mismatch", 2, "error")]


# -- formats, exit codes, output rules ---------------------------------------------------------------------


def test_text_format_groups_by_skill(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(tmp_path, "clean")
    bad = write_skill(tmp_path, "bad", extra="reviewed: yes\n")
    write_file(tmp_path / "worse" / "SKILL.md", skill_md("other"))
    code, out, _ = run(capsys, str(tmp_path))
    assert code == 1
    assert out.splitlines() == [
        f"{bad} (skill://bad/SKILL.md)",
        f"{bad}/SKILL.md:4: warning unknown-key: 'reviewed' is not an Agent Skills field: SEP-2640 serves it "
        "verbatim, but the Agent Skills validator (skills-ref) rejects unknown keys",
        "    suggestion: keep it if your hosts use it, or move it under 'metadata:' as a string (name, description, "
        "license, compatibility, metadata, allowed-tools are the Agent Skills fields)",
        f"{bad}/SKILL.md:4: warning yaml-bool: reviewed: 'yes' is a string in YAML 1.2 but a boolean in YAML 1.1 "
        "parsers (PyYAML, FastMCP)",
        '    suggestion: quote it, e.g. reviewed: "yes"',
        "",
        f"{tmp_path}/worse (skill://worse/SKILL.md)",
        f"{tmp_path}/worse/SKILL.md:2: error name-mismatch: frontmatter name 'other' does not match its folder 'worse' "
        "(the final segment of its URI)",
        "    suggestion: set 'name: worse' or rename the folder to 'other'",
        "",
        "skillwire lint: 3 skills checked, 2 with problems: 1 error, 2 warnings (FAILED)",
    ]
    assert "\x1b[" not in out  # no colour when piped


def test_quiet_prints_only_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(tmp_path, "warned", extra="reviewed: yes\n")
    code, out, err = run(capsys, "--quiet", str(tmp_path))
    assert (code, out, err) == (0, "", "")
    write_file(tmp_path / "worse" / "SKILL.md", skill_md("other"))
    code, out, err = run(capsys, "-q", str(tmp_path))
    assert code == 1
    assert [line for line in out.splitlines() if ": warning " in line] == []
    assert len([line for line in out.splitlines() if ": error name-mismatch:" in line]) == 1
    assert "skillwire lint:" not in out


def test_clean_folder_exit_zero_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(tmp_path, "clean")
    code, out, _ = run(capsys, "--strict", str(tmp_path))
    assert code == 0
    assert out == "skillwire lint: 1 skill checked, 0 with problems: 0 errors, 0 warnings (ok, strict)\n"


def test_strict_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_skill(tmp_path / "w", "warned", extra="reviewed: yes\n")
    write_skill(tmp_path / "i", "outer")
    write_skill(tmp_path / "i", "outer/inner")
    assert run(capsys, str(tmp_path / "w"))[0] == 0
    assert run(capsys, "--strict", str(tmp_path / "w"))[0] == 1
    assert run(capsys, "--strict", str(tmp_path / "i"))[0] == 0  # info never fails
    write_file(tmp_path / "e" / "broken" / "SKILL.md", "no frontmatter\n")
    assert run(capsys, str(tmp_path / "e"))[0] == 1
    assert run(capsys, str(tmp_path / "i"), str(tmp_path / "e"))[0] == 1  # several PATHs


def test_github_format_exact_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_skill(tmp_path, "bad", extra="metadata:\n  version: 1.10\n")
    write_file(tmp_path / "worse" / "SKILL.md", "---\nname: other\ndescription: 'a, b: c'\n---\n")
    write_skill(tmp_path, "bad/inner")
    code, out, err = run(capsys, "--format", "github", str(tmp_path))
    assert code == 1
    assert out.splitlines() == [
        f"::error file={bad}/SKILL.md,line=5,title=metadata-not-string::metadata.version must be a string (Agent "
        "Skills metadata values are strings), not the number 1.1%0ASuggestion: quote it as written (metadata values "
        "are strings)",
        f"::warning file={bad}/SKILL.md,line=5,title=yaml-number-text::metadata.version: '1.10' is the number 1.1, "
        'not the text as written%0ASuggestion: quote it if it is a version or an identifier, e.g. version: "1.10"',
        f"::notice file={bad}/inner/SKILL.md,title=nested-skill::nested inside the skill at {bad}: published as its "
        "own skill (skill://bad/inner/SKILL.md), and its 1 file(s) are also listed in the enclosing skill and count "
        "toward its limits%0ASuggestion: nothing to do if intended; move it beside the enclosing skill to keep the "
        "two apart",
        f"::error file={tmp_path}/worse/SKILL.md,line=2,title=name-mismatch::frontmatter name 'other' does not match "
        "its folder "
        "'worse' (the final segment of its URI)%0ASuggestion: set 'name: worse' or rename the folder to 'other'",
    ]
    assert "skillwire lint: 3 skills checked, 2 with problems: 2 errors, 1 warning, 1 info (FAILED)" in err
    code, out, _ = run(capsys, "--format", "github", "--quiet", str(tmp_path))
    assert [line.split(" ", 1)[0] for line in out.splitlines()] == ["::error", "::error"]


def test_github_escaping() -> None:
    finding = Finding("a,b:c%.md", 3, "error", "broken-link", "50% done\nnext", "fix: it", None)
    assert format_github_line(finding) == (
        "::error file=a%2Cb%3Ac%25.md,line=3,title=broken-link::50%25 done%0Anext%0ASuggestion: fix: it"
    )


def test_json_format_and_json_alias(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(tmp_path, "bad", extra="reviewed: yes\n")
    code, out, err = run(capsys, "--json", str(tmp_path))
    assert code == 0
    data = json.loads(out)
    assert data[0] == {
        "file": str(folder / "SKILL.md"),
        "line": 4,
        "severity": "warning",
        "rule": "unknown-key",
        "message": data[0]["message"],
        "suggestion": data[0]["suggestion"],
        "skill": str(folder),
    }
    assert err == ""
    code, out, _ = run(capsys, "--format", "json", str(tmp_path / "empty-dir-that-does-not-exist"))
    assert code == 2


def test_usage_errors_are_one_line_with_a_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(tmp_path / "missing"))
    assert (code, out) == (2, "")
    assert err == f"skillwire: lint: {tmp_path / 'missing'}: no such file or folder\n"
    write_file(tmp_path / "notes.txt", "x")
    code, _, err = run(capsys, str(tmp_path / "notes.txt"))
    assert code == 2
    assert "give a skill folder, a folder of skills, or a SKILL.md" in err
    code, _, err = run(capsys)
    assert code == 2
    assert "skillwire lint ./skills" in err
    code, _, err = run(capsys, "--json", "--format", "github", str(tmp_path))
    assert code == 2
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_list_rules(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--list-rules")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == len(RULES)
    assert lines[0].split()[:2] == ["not-utf8", "error"]
    assert all(rule in out for rule in RULES)


# -- real inputs ---------------------------------------------------------------------------------------------


def test_bundled_examples_lint_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, findings = lint_json(capsys, "--strict", str(bundled_examples()))
    assert code == 0
    assert [f["severity"] for f in findings if f["severity"] != "info"] == []
    assert rules_of(findings) == ["nested-skill"]  # code-review/security-audit


@pytest.mark.skipif(not CORPUS.is_dir(), reason="awesome-copilot corpus not present")
def test_awesome_copilot_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    code, findings = lint_json(capsys, str(CORPUS))
    assert code == 1
    mismatches = [f for f in findings if f["rule"] == "name-mismatch"]
    assert len(mismatches) == 15
    nested = {f["file"] for f in findings if f["rule"] == "nested-skill"}
    assert {f["file"] for f in mismatches} == nested
    assert all("/qdrant-" in f["file"] for f in mismatches)
    assert all(f["line"] == 2 for f in mismatches)
    assert "no-skills" not in rules_of(findings)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    write_file(tmp_path / "worse" / "SKILL.md", skill_md("other"))
    report = lint_path(str(tmp_path))
    terminal = _Terminal()
    print_text(Output(stdout=terminal, stderr=io.StringIO()), [report], report.findings, strict=False)
    assert "\x1b[" in terminal.getvalue()
    assert "error name-mismatch" in terminal.getvalue()
    piped = io.StringIO()
    print_text(Output(stdout=piped, stderr=io.StringIO()), [report], report.findings, strict=False)
    assert "\x1b[" not in piped.getvalue()
    assert f"{tmp_path}/worse/SKILL.md:2: error name-mismatch: " in piped.getvalue()
