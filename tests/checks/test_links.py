"""Links in a SKILL.md body are what a CommonMark renderer shows as links (checks/links.py, markdown-it-py):
nothing in code blocks, code spans or HTML comments is a `broken-link`, a GFM footnote is not a link, and
reference-style links and images, and plain relative links, to missing files still are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillwire.checks.links import MISSING, CaseMismatch, NotServed, Target, body_links, check_links
from skillwire.cli.main import main

SERVED = {("references", "guide.md"), ("assets", "logo.png")}


def served_only(path: tuple[str, ...]) -> Target:
    return "file" if path in SERVED else MISSING


def broken(body: str, start: int = 1) -> list[tuple[str, int, str]]:
    """(rule, file line, message) of every finding for `body`, with only `SERVED` on disk."""
    return [(f.rule, f.line or 0, f.message) for f in check_links(body, start, served_only, file="s/SKILL.md")]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("Text.\n\n    [indented](missing.md)\n", id="indented-code-block"),
        pytest.param("```markdown\n[fenced](missing.md)\n```\n", id="backtick-fence"),
        pytest.param("~~~~\n![fenced](missing.png)\n~~~~\n", id="tilde-fence"),
        pytest.param("Use `[inline](missing.md)` as written.\n", id="code-span"),
        pytest.param("Use ``a ` [double](missing.md)`` here.\n", id="double-backtick-code-span"),
        pytest.param("<!-- [commented](missing.md) -->\n", id="html-comment"),
        pytest.param("<!--\n[commented](missing.md)\n-->\n", id="multi-line-html-comment"),
        pytest.param("Text <!-- [inline comment](missing.md) --> text.\n", id="inline-html-comment"),
        pytest.param("Escaped \\[not a link](missing.md).\n", id="escaped-bracket"),
    ],
)
def test_a_link_in_code_or_a_comment_is_not_a_link(body: str) -> None:
    assert broken(body) == []


def test_a_gfm_footnote_is_not_flagged() -> None:
    # One-word footnote text would be a link reference definition to CommonMark alone ("note.md").
    body = "A claim.[^1] Another.[^long-name]\n\n[^1]: note.md\n[^long-name]: See the guide.\n"
    assert broken(body) == []
    assert body_links(body) == []


def test_a_link_inside_a_footnote_is_still_checked() -> None:
    body = "A claim.[^1]\n\n[^1]: See [the missing page](missing.md) for more.\n"
    assert broken(body, 5) == [("broken-link", 7, "link to 'missing.md': no such file in the skill")]


def test_reference_style_links_and_images_to_missing_files_are_reported_at_their_definition() -> None:
    body = (
        "See [the guide][guide], [the notes][notes] and ![the chart][chart].\n"
        "Also [notes] again, and [the logo][logo].\n"
        "\n"
        "[guide]: references/guide.md\n"
        "[notes]: references/notes.md\n"
        '[chart]: <assets/missing chart.png> "Chart"\n'
        "[logo]: assets/logo.png\n"
    )
    assert broken(body, 10) == [
        ("broken-link", 14, "link to 'references/notes.md': no such file in the skill"),
        ("broken-link", 15, "link to 'assets/missing chart.png': no such file in the skill"),
    ]


def test_a_real_broken_relative_link_is_still_reported_on_its_line() -> None:
    body = "Intro.\n\nSee [the guide](references/guide.md) and\nthe [setup](references/setup.md#first) page.\n"
    assert broken(body, 6) == [("broken-link", 9, "link to 'references/setup.md#first': no such file in the skill")]


def test_links_in_lists_quotes_and_headings_carry_their_own_line() -> None:
    body = "# Title [a](a.md)\n\n- item\n  [b](b.md)\n\n> quote\n> [c](c.md)\n\n<./d.md>\n"
    assert [(link.line, link.href) for link in body_links(body)] == [(0, "a.md"), (3, "b.md"), (6, "c.md")]


def test_a_lone_carriage_return_does_not_shift_line_numbers() -> None:
    # SKILL.md lines end at LF; CommonMark alone would count the CR as a line break.
    assert [link.line for link in body_links("one\rtwo\n[x](x.md)\n")] == [1]


def test_what_the_target_says_decides_the_rule() -> None:
    answers: dict[tuple[str, ...], Target] = {
        ("dir",): "dir",
        ("Guide.md",): CaseMismatch("guide.md"),
        ("pipe",): NotServed("not a regular file"),
    }
    found = check_links(
        "[d](dir/) [g](Guide.md) [p](pipe) [up](../x.md) [abs](/etc/passwd) [web](https://example.com/x.md)\n",
        3,
        lambda path: answers.get(path, MISSING),
        file="s/SKILL.md",
    )
    assert [(f.rule, f.severity, f.suggestion) for f in found] == [
        ("broken-link", "error", "did you mean 'guide.md'?"),
        (
            "link-not-served",
            "error",
            "serve the file (a regular file inside the skill, not ignored) or remove the link",
        ),
        ("link-escapes", "error", "copy the file into the skill and link to it relatively"),
        ("absolute-link", "warning", "link relative to the folder of SKILL.md, e.g. 'references/x.md'"),
    ]
    assert "(not a regular file)" in found[1].message


def test_lint_reports_only_the_real_broken_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "linked"
    (folder / "references").mkdir(parents=True)
    (folder / "references" / "guide.md").write_text("g", encoding="utf-8")
    body = (
        "See [the guide](references/guide.md).[^1]\n"
        "\n"
        "    [indented](gone-indented.md)\n"
        "\n"
        "<!-- [commented](gone-comment.md) -->\n"
        "\n"
        "Broken: [this one](references/gone.md)\n"
        "\n"
        "[^1]: footnote.md\n"
    )
    (folder / "SKILL.md").write_text(f"---\nname: linked\ndescription: Links.\n---\n{body}", encoding="utf-8")
    code = main(["lint", "--format", "json", str(tmp_path)])
    findings = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [(f["rule"], f["line"], f["message"]) for f in findings] == [
        ("broken-link", 11, "link to 'references/gone.md': no such file in the skill")
    ]
