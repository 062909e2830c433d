"""`skillwire pull` and `pull --check` against real servers: `skillwire serve` over HTTP and stdio, and
a server that lies (tests/servers/lying_server_cli.py).

The round trip: pull the example skills, serve the pulled directory, and the second server publishes
the same entries (frontmatter, every file's uri, digest and size) as the first, which are also the
digests in `skills.lock`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from servers import LyingServer
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import LockError
from skillwire.core.manifest import human_size
from skillwire.host.mirror.layout import plan_skill
from skillwire.host.mirror.lock import LOCK_NAME, Lock
from support.cli import run_cli as cli
from support.cli import run_cli_process as cli_process
from support.servers import EXAMPLES, serve_http

STDIO = [sys.executable, "-m", "skillwire.cli.main", "serve", "--stdio", "--no-watch", "--no-digest-cache", "-q"]
EXAMPLE_SKILLS = {
    "skill://acme/billing/refunds/SKILL.md": "acme/billing/refunds",
    "skill://code-review/SKILL.md": "code-review",
    "skill://code-review/security-audit/SKILL.md": "code-review/security-audit",
    "skill://git-workflow/SKILL.md": "git-workflow",
    "skill://pdf-processing/SKILL.md": "pdf-processing",
}


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def wire_files(entry: dict[str, Any]) -> set[tuple[str, str, int]]:
    return {(r["uri"], r["digest"], r["size"]) for r in entry["resources"]}


def get_entry(uri: str, *server: str) -> dict[str, Any]:
    result = cli("get", "--json", uri, *server)
    assert result.code == 0, result.err
    skill: dict[str, Any] = json.loads(result.out)["skill"]
    return skill


def read_lock(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / LOCK_NAME).read_text())
    return data


def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.rglob(".skillwire-*")]


# -- round trip --------------------------------------------------------------------------------------------------


def test_round_trip_pull_serve_compare(examples_url: str, tmp_path: Path) -> None:
    out = tmp_path / "pulled"
    result = cli("pull", "--to", str(out), examples_url)
    assert result.code == 0, result.err
    lock = read_lock(out)
    assert lock["origin"] == examples_url
    assert [s["uri"] for s in lock["skills"]] == sorted(EXAMPLE_SKILLS)

    originals = {uri: get_entry(uri, examples_url) for uri in EXAMPLE_SKILLS}
    for skill in lock["skills"]:
        original = originals[skill["uri"]]
        # The lock holds exactly the original server's manifest ...
        assert {(f["uri"], f["digest"], f["size"]) for f in skill["files"]} == wire_files(original)
        assert skill["name"] == original["frontmatter"]["name"]
        assert skill["path"] == EXAMPLE_SKILLS[skill["uri"]]
        # ... and the files on disk are those bytes.
        for item in skill["files"]:
            data = (out / skill["path"] / item["path"]).read_bytes()
            assert (digest(data), len(data)) == (item["digest"], item["size"])
    assert tree(out).keys() - {LOCK_NAME} == tree(EXAMPLES).keys()  # the same files as the source, nothing else

    with serve_http([str(out), "--no-watch", "--no-digest-cache"]) as copy:
        for uri, original in originals.items():
            served = get_entry(uri, copy.url)
            assert served["frontmatter"] == original["frontmatter"]
            assert wire_files(served) == wire_files(original)
        listed_copy = json.loads(cli("ls", "--json", copy.url).out)["skills"]
        listed_original = json.loads(cli("ls", "--json", examples_url).out)["skills"]
        assert listed_copy == listed_original
        if importlib.util.find_spec("skillwire.cli.check") is not None:  # `skillwire check` is built separately
            audit = cli_process("check", copy.url)
            assert audit.code == 0, audit.out.decode() + audit.err


def test_pull_plain_output(examples_url: str, tmp_path: Path) -> None:
    out = tmp_path / "plain"
    result = cli("pull", "--to", str(out), examples_url)
    assert result.code == 0, result.err
    # stderr is a pipe: no progress there at all; stdout, the result, says each skill once (issue 20).
    assert result.err == ""
    expected = []
    for uri, path in EXAMPLE_SKILLS.items():
        files = tree(EXAMPLES / path)
        count = len(files)
        expected.append(
            f"pulled {uri} -> {out}/{path} ({count} file{'' if count == 1 else 's'}, "
            f"{human_size(sum(map(len, files.values())))})"
        )
    expected.append(f"pulled 5 of 5 skills into {out} (lock: {out}/{LOCK_NAME})")
    assert result.text.splitlines() == expected
    assert b"\x1b[" not in result.out
    assert leftovers(out) == []


def test_pull_json_output(examples_url: str, tmp_path: Path) -> None:
    out = tmp_path / "json"
    result = cli("pull", "--json", "--to", str(out), examples_url)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["origin"] == examples_url
    assert data["to"] == str(out)
    assert data["lock"] == f"{out}/{LOCK_NAME}"
    assert data["ok"] is True
    assert [s["uri"] for s in data["skills"]] == list(EXAMPLE_SKILLS)
    for skill in data["skills"]:
        files = tree(EXAMPLES / EXAMPLE_SKILLS[skill["uri"]])
        assert skill == {
            "uri": skill["uri"],
            "status": "pulled",
            "path": EXAMPLE_SKILLS[skill["uri"]],
            "files": len(files),
            "size": sum(map(len, files.values())),
            "error": None,
        }


def test_lock_file_format_is_stable(examples_url: str, tmp_path: Path) -> None:
    out = tmp_path / "stable"
    assert cli("pull", "-q", "--to", str(out), examples_url).code == 0
    first = (out / LOCK_NAME).read_bytes()
    assert cli("pull", "-q", "--to", str(out), examples_url).code == 0
    assert (out / LOCK_NAME).read_bytes() == first
    assert first.endswith(b"}\n")
    data = json.loads(first)
    assert list(data) == ["version", "origin", "selection", "skills"]
    assert (data["version"], data["selection"]) == (1, "all")
    for skill in data["skills"]:
        assert list(skill) == ["uri", "name", "path", "files"]
        assert [f["path"] for f in skill["files"]] == sorted(f["path"] for f in skill["files"])
        assert all(list(f) == ["path", "uri", "digest", "size"] for f in skill["files"])
    assert Lock.from_text(first.decode(), "x").to_text().encode() == first


def test_quiet_pull_prints_nothing(examples_url: str, tmp_path: Path) -> None:
    result = cli("pull", "--quiet", "--to", str(tmp_path / "q"), examples_url)
    assert (result.code, result.out, result.err) == (0, b"", "")


# -- choosing skills -----------------------------------------------------------------------------------------------


def test_pull_named_skills_with_options_between(examples_url: str, tmp_path: Path) -> None:
    out = tmp_path / "named"
    result = cli(
        "pull", "skill://git-workflow/SKILL.md", "--to", str(out), "skill://acme/billing/refunds", "pdf-processing",
        examples_url,
    )  # fmt: skip
    assert result.code == 0, result.err
    assert sorted(p.name for p in out.iterdir()) == ["acme", "git-workflow", "pdf-processing", LOCK_NAME]
    lock = read_lock(out)
    assert lock["selection"] == "named"
    assert [s["uri"] for s in lock["skills"]] == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://git-workflow/SKILL.md",
        "skill://pdf-processing/SKILL.md",
    ]
    missing = cli("pull", "skill://nothing-here/SKILL.md", "--to", str(out), examples_url)
    assert missing.code == 1
    assert "skillwire: failed skill://nothing-here/SKILL.md:" in missing.err


def test_nested_skills_pulled_in_either_order(examples_url: str, tmp_path: Path) -> None:
    out = tmp_path / "nested"
    inner, outer = "skill://code-review/security-audit/SKILL.md", "skill://code-review/SKILL.md"
    assert cli("pull", inner, "--to", str(out), examples_url).code == 0
    result = cli("pull", outer, "--to", str(out), examples_url)
    assert result.code == 0, result.err
    assert "warning" not in result.err
    assert tree(out / "code-review") == tree(EXAMPLES / "code-review")
    assert [s["uri"] for s in read_lock(out)["skills"]] == [outer, inner]
    assert cli("pull", inner, "--to", str(out), examples_url).code == 0
    assert tree(out / "code-review") == tree(EXAMPLES / "code-review")


# -- replacing what is there -----------------------------------------------------------------------------------------


def test_repull_restores_local_edits_and_refuses_unknown_files(examples_url: str, tmp_path: Path) -> None:
    out = tmp_path / "repull"
    skill = "skill://git-workflow/SKILL.md"
    assert cli("pull", skill, "--to", str(out), examples_url).code == 0
    original = (out / "git-workflow" / "SKILL.md").read_bytes()
    (out / "git-workflow" / "SKILL.md").write_text("edited locally\n")
    assert cli("pull", skill, "--to", str(out), examples_url).code == 0
    assert (out / "git-workflow" / "SKILL.md").read_bytes() == original

    (out / "git-workflow" / "notes.txt").write_text("mine\n")
    refused = cli("pull", skill, "--to", str(out), examples_url)
    assert refused.code == 1
    assert "does not account for (git-workflow/notes.txt)" in refused.err
    assert (out / "git-workflow" / "notes.txt").read_text() == "mine\n"
    assert (out / "git-workflow" / "SKILL.md").read_bytes() == original
    assert leftovers(out) == []


def test_a_target_under_a_regular_file_is_named_not_the_server(examples_url: str, tmp_path: Path) -> None:
    # Issue 37, broken 5: this said "error: http://127.0.0.1:.../mcp: Not a directory".
    afile = tmp_path / "afile"
    afile.write_text("a file\n")
    result = cli("pull", "--to", str(afile / "sub"), examples_url)
    assert result.code == 2, result.err
    assert result.err.splitlines() == [f"skillwire: --to {afile}/sub: {afile} is not a directory"]
    assert afile.read_text() == "a file\n"


def test_a_directory_not_from_a_pull_is_not_replaced(examples_url: str, tmp_path: Path) -> None:
    out = tmp_path / "foreign"
    (out / "git-workflow").mkdir(parents=True)
    (out / "git-workflow" / "SKILL.md").write_text("someone else's\n")
    result = cli("pull", "--to", str(out), examples_url)
    assert result.code == 1
    assert "git-workflow exists and holds files skills.lock does not account for" in result.err
    assert (out / "git-workflow" / "SKILL.md").read_text() == "someone else's\n"
    assert "skill://git-workflow/SKILL.md" not in {s["uri"] for s in read_lock(out)["skills"]}
    assert (out / "pdf-processing" / "SKILL.md").exists()  # the others were pulled


def test_symlink_out_of_the_directory_is_refused(examples_url: str, tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "acme").symlink_to(elsewhere, target_is_directory=True)
    result = cli("pull", "skill://acme/billing/refunds/SKILL.md", "--to", str(out), examples_url)
    assert result.code == 1
    assert "leads outside" in result.err
    assert list(elsewhere.iterdir()) == []


# -- lying servers -------------------------------------------------------------------------------------------------


def test_partial_failure_pulls_the_honest_skills_and_writes_nothing_of_the_others(
    lying: LyingServer, tmp_path: Path
) -> None:
    out = tmp_path / "partial"
    mark = lying.mark()
    result = cli("pull", "--to", str(out), lying.url)
    assert result.code == 1
    reads = lying.reads_since(mark)
    for never in ["bad-file/z-after.md", "bad-md/references/notes.md", "fm-swap/references/notes.md"]:
        assert f"skill://lie/{never}" not in reads  # SKILL.md (or a file before) failed: nothing more was read
    assert "skill://lie/bad-md/SKILL.md" in reads
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "lie/a/twin/SKILL.md",
        "lie/b/twin/SKILL.md",
        "lie/good/SKILL.md",
        "lie/good/references/guide.md",
        "lie/good/scripts/run.sh",
        LOCK_NAME,
    ]
    assert leftovers(out) == []
    assert "LIE-PAYLOAD" not in json.dumps(tree(out), default=lambda b: b.decode())
    assert [s["uri"] for s in read_lock(out)["skills"]] == [
        "skill://lie/a/twin/SKILL.md",
        "skill://lie/b/twin/SKILL.md",
        "skill://lie/good/SKILL.md",
    ]
    errors = result.err.splitlines()
    assert any(
        line.startswith("skillwire: failed skill://lie/bad-file/SKILL.md: skill://lie/bad-file/references/data.md: "
                        "digest mismatch") and line.endswith("nothing of this skill was written")
        for line in errors
    )  # fmt: skip
    assert any("failed skill://lie/bad-md/SKILL.md" in line and "size mismatch" in line for line in errors)
    assert any("failed skill://lie/fm-swap/SKILL.md" in line and "frontmatter differs" in line for line in errors)
    assert any("failed skill://lie/broken/SKILL.md: malformed entry" in line for line in errors)
    assert any(line.startswith("skipped skill://lie/dyn/SKILL.md: dynamic skill") for line in errors)
    assert result.text.splitlines()[-1] == (
        f"pulled 3 of 8 skills into {out} (lock: {out}/{LOCK_NAME}); 4 failed, 1 skipped"
    )

    as_json = cli("pull", "--json", "--to", str(tmp_path / "partial-json"), lying.url)
    assert as_json.code == 1
    data = json.loads(as_json.out)
    assert data["ok"] is False
    statuses = {s["uri"]: s["status"] for s in data["skills"]}
    assert statuses == {
        "skill://lie/broken/SKILL.md": "failed",
        "skill://lie/a/twin/SKILL.md": "pulled",
        "skill://lie/b/twin/SKILL.md": "pulled",
        "skill://lie/bad-file/SKILL.md": "failed",
        "skill://lie/bad-md/SKILL.md": "failed",
        "skill://lie/dyn/SKILL.md": "skipped",
        "skill://lie/fm-swap/SKILL.md": "failed",
        "skill://lie/good/SKILL.md": "pulled",
    }


def test_named_dynamic_skill_is_an_error(lying: LyingServer, tmp_path: Path) -> None:
    result = cli("pull", "skill://lie/dyn/SKILL.md", "--to", str(tmp_path / "dyn"), lying.url)
    assert result.code == 1
    assert "skill://lie/dyn/SKILL.md: dynamic skill" in result.err
    assert not (tmp_path / "dyn" / "lie").exists()


# -- check -----------------------------------------------------------------------------------------------------------


def test_check_reports_what_changed_and_pull_catches_up(tmp_path: Path) -> None:
    source, out = tmp_path / "source", tmp_path / "out"
    shutil.copytree(EXAMPLES, source)
    server = ["--", *STDIO, str(source)]
    assert cli("pull", "--to", str(out), *server).code == 0
    same = cli("pull", "--check", "--to", str(out), *server)
    assert same.code == 0, same.err
    assert same.text.splitlines()[-1] == "in step: all 5 skills in skills.lock match the server and the disk"

    pdf = source / "pdf-processing"
    (pdf / "references" / "FORMS.md").write_text("# Forms, rewritten\n")
    (pdf / "references" / "NEW.md").write_text("# New\n")
    (pdf / "scripts" / "extract.py").unlink()
    shutil.rmtree(source / "git-workflow")
    (source / "fresh").mkdir()
    (source / "fresh" / "SKILL.md").write_text("---\nname: fresh\ndescription: A new skill.\n---\nBody.\n")

    changed = cli("pull", "--check", "--to", str(out), *server)
    assert changed.code == 1, changed.err
    assert changed.text.splitlines() == [
        "in step          skill://acme/billing/refunds/SKILL.md",
        "in step          skill://code-review/SKILL.md",
        "in step          skill://code-review/security-audit/SKILL.md",
        "gone upstream    skill://git-workflow/SKILL.md  (the server no longer serves it)",
        "changed upstream skill://pdf-processing/SKILL.md",
        "  added    references/NEW.md",
        "  removed  scripts/extract.py",
        "  changed  references/FORMS.md",
        "new              skill://fresh/SKILL.md  (listed by the server, not pulled)",
        "3 of 6 skills differ from skills.lock",
    ]
    data = json.loads(cli("pull", "--check", "--json", "--to", str(out), *server).out)
    assert data["changed"] is True
    assert data["lock_origin"] == data["origin"] == " ".join([*STDIO, str(source)])
    pdf_change = next(s for s in data["skills"] if s["uri"] == "skill://pdf-processing/SKILL.md")
    assert pdf_change == {
        "uri": "skill://pdf-processing/SKILL.md",
        "status": "changed upstream",
        "added": ["references/NEW.md"],
        "removed": ["scripts/extract.py"],
        "changed": ["references/FORMS.md"],
        "note": None,
    }
    assert {s["uri"]: s["status"] for s in data["skills"]}["skill://fresh/SKILL.md"] == "new"

    assert cli("pull", "--to", str(out), *server).code == 0
    assert tree(out / "pdf-processing") == tree(pdf)  # replaced as a whole: the removed file is gone
    assert (out / "fresh" / "SKILL.md").exists()
    after = cli("pull", "--check", "--to", str(out), *server)
    assert after.code == 1  # a skill removed on the server stays pulled (pull never deletes) and is reported
    assert [line[:16].strip() for line in after.text.splitlines()[:-1]] == [
        "in step",
        "in step",
        "in step",
        "in step",
        "gone upstream",
        "in step",
    ]


def test_check_needs_a_lock_and_pull_refuses_another_origin(examples_url: str, tmp_path: Path) -> None:
    none = cli("pull", "--check", "--to", str(tmp_path / "nothing"), examples_url)
    assert none.code == 2
    assert "no skills.lock" in none.err
    other = tmp_path / "other"
    other.mkdir()
    (other / LOCK_NAME).write_text(Lock("http://elsewhere.example/mcp").to_text())
    refused = cli("pull", "--to", str(other), examples_url)
    assert refused.code == 2
    assert "pulled from http://elsewhere.example/mcp" in refused.err
    assert sorted(p.name for p in other.iterdir()) == [LOCK_NAME]
    (other / LOCK_NAME).write_text("{not json")
    broken = cli("pull", "--to", str(other), examples_url)
    assert broken.code == 2
    assert "is not a usable skills.lock" in broken.err
    assert cli("pull", "--check", "skill://x/SKILL.md", "--to", str(other), examples_url).code == 2


# -- where pulled skills land ----------------------------------------------------------------------------------------


def test_warning_before_writing_into_a_discovery_path(examples_url: str, tmp_path: Path) -> None:
    inside = tmp_path / "project" / ".claude" / "skills"
    result = cli("pull", "skill://git-workflow/SKILL.md", "--to", str(inside), examples_url)
    assert result.code == 0, result.err
    assert result.err.startswith(f"warning: {inside} is inside ")
    assert "where agent hosts discover skills" in result.err
    assert (inside / "git-workflow" / "SKILL.md").exists()
    elsewhere = cli("pull", "skill://git-workflow/SKILL.md", "--to", str(tmp_path / "plain"), examples_url)
    assert "warning" not in elsewhere.err


def _entry(files: list[str], *, uri: str = "skill://s/SKILL.md") -> SkillEntry:
    root = uri.removesuffix("/SKILL.md")
    resources = [{"uri": f"{root}/{f}", "digest": "sha256:" + "0" * 64, "size": 1} for f in ["SKILL.md", *files]]
    name = root.rsplit("/", 1)[-1]
    return SkillEntry.from_wire({"uri": uri, "frontmatter": {"name": name, "description": "d"}, "resources": resources})


def test_plan_refuses_layouts_that_cannot_be_written() -> None:
    plan = plan_skill(_entry(["b.md", "a/x.md"]))
    assert not isinstance(plan, str)
    assert [p for p, _ in plan.files] == ["SKILL.md", "a/x.md", "b.md"]
    assert plan.path == "s"
    conflict = plan_skill(_entry(["a", "a/x.md"]))
    assert isinstance(conflict, str)
    assert "listed as a file and also holds" in conflict
    case = plan_skill(_entry(["Read.md", "read.md"]))
    assert isinstance(case, str)
    assert "differ only in case" in case
    clash = plan_skill(_entry([], uri="skill://skills.lock/s/SKILL.md"))
    assert isinstance(clash, str)
    assert "clashes with skills.lock" in clash
    long_name = plan_skill(_entry(["x" * 300]))
    assert isinstance(long_name, str)
    assert "too long" in long_name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "not a JSON object"),
        ('{"version": 9, "origin": "o", "selection": "all", "skills": []}', "newer skillwire"),
        ('{"version": 1, "origin": "o", "selection": "all"}', "no skills array"),
        (
            '{"version": 1, "origin": "o", "selection": "all", "skills": [{"uri": "u", "name": "n", '
            '"path": "../up", "files": []}]}',
            "not a safe relative path",
        ),
        (
            '{"version": 1, "origin": "o", "selection": "all", "skills": [{"uri": "u", "name": "n", "path": "p", '
            '"files": [{"path": "f", "uri": "u", "digest": "md5:x", "size": 1}]}]}',
            "digest",
        ),
    ],
)
def test_lock_validation(text: str, message: str) -> None:
    with pytest.raises(LockError, match=message):
        Lock.from_text(text, "skills.lock")
