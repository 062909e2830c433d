"""The catalog page's rendering without a server: Markdown links and images, folders from a manifest, the
copy-ready lines, one-line names, download names (web/markdown.py, web/render.py, web/app.py)."""

from __future__ import annotations

import shlex

import pytest

from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestFile
from skillwire.web.app import attachment_name
from skillwire.web.markdown import render_markdown
from skillwire.web.render import Pages, folder_items, install_lines, one_line
from skillwire.web.view import FileRow, InstallTarget, SignatureVerdict, SkillFacts

SKILL = "skill://acme/tool/SKILL.md"
FILES = [SKILL, "skill://acme/tool/scripts/run.py", "skill://acme/tool/img/a%20b.png"]


def link_to(uri: str, is_folder: bool) -> str:
    return ("/dir?u=" if is_folder else "/file?u=") + uri


def render(body: str) -> str:
    return render_markdown(body, skill_md_uri=SKILL, file_uris=FILES, link_to=link_to)


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("[x](https://example.com/a)", '<a href="https://example.com/a" rel="noopener noreferrer nofollow">x</a>'),
        ("[x](scripts/run.py)", '<a href="/file?u=skill://acme/tool/scripts/run.py">x</a>'),
        ("[x](./scripts/../scripts/run.py#top)", '<a href="/file?u=skill://acme/tool/scripts/run.py">x</a>'),
        ("[x](scripts)", '<a href="/dir?u=skill://acme/tool/scripts">x</a>'),
        ("[x](img/a%20b.png)", '<a href="/file?u=skill://acme/tool/img/a%20b.png">x</a>'),
        ("[x](../other/SKILL.md)", '<span class="dead-link">x</span>'),
        ("[x](/etc/passwd)", '<span class="dead-link">x</span>'),
        ("[x](missing.md)", '<span class="dead-link">x</span>'),
        ("[x](//evil.example/x)", '<span class="dead-link">x</span>'),
        ("[x](ftp://example.com/x)", '<span class="dead-link">x</span>'),
        ("[x](#section)", '<span class="dead-link">x</span>'),
        ("[x](javascript:alert(1))", "[x](javascript:alert(1))"),  # markdown-it's own check already refuses it
        ("[x](data:text/html,hi)", "[x](data:text/html,hi)"),
        ("<https://example.com>", '<a href="https://example.com" rel="noopener noreferrer nofollow">'),
        (
            "![pic](img/a%20b.png)",
            '<a class="image-link" href="/file?u=skill://acme/tool/img/a%20b.png">[image: pic]</a>',
        ),
        ("![pic](https://example.com/p.png)", '<span class="image-alt">[image: pic]</span>'),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ('<img src=x onerror="alert(1)">', "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"),
    ],
)
def test_markdown_keeps_only_safe_links_and_loads_no_image(markdown: str, html: str) -> None:
    rendered = render(markdown)
    assert html in rendered
    assert "<img" not in rendered
    assert "<script" not in rendered


def test_a_link_label_is_escaped_and_an_unsafe_href_is_not_kept() -> None:
    rendered = render('[<b>bold</b>](https://example.com/"onmouseover="x)')
    assert "&lt;b&gt;bold&lt;/b&gt;" in rendered
    assert '"onmouseover' not in rendered


def facts(*uris: str) -> SkillFacts:
    rows = [FileRow(uri, "sha256:" + "0" * 64, 3, "text/plain") for uri in (SKILL, *uris)]
    entry = SkillEntry(
        SKILL, {"name": "tool", "description": "d"}, tuple(ManifestFile(r.uri, r.digest, 3) for r in rows)
    )
    return SkillFacts(entry, True, rows, SignatureVerdict("unsigned", "not signed"), None, None)


def test_folders_come_from_the_manifest_with_decoded_names() -> None:
    skill = facts("skill://acme/tool/a/one.md", "skill://acme/tool/a/b/two.md", "skill://acme/tool/%3Cx%3E/three.md")
    root = folder_items(skill, "skill://acme/tool")
    assert root is not None
    assert [(i.name, i.is_folder) for i in root] == [("<x>", True), ("a", True), ("SKILL.md", False)]
    inner = folder_items(skill, "skill://acme/tool/a")
    assert inner is not None
    assert [(i.name, i.is_folder) for i in inner] == [("b", True), ("one.md", False)]
    assert folder_items(skill, "skill://acme/tool/nothing") is None
    assert folder_items(skill, "skill://acme/other") is None  # not this skill's
    assert folder_items(skill, "skill://acme/tool/a/one.md") is None  # a file is not a folder


def test_install_lines_quote_what_they_paste() -> None:
    odd = "skill://acme/it's $(rm -rf ~)/SKILL.md"
    lines = dict(install_lines(InstallTarget("skills", "http://127.0.0.1:8765/mcp"), odd))
    pull = shlex.split(lines["Copy this skill into a host's skills folder"])
    assert pull == ["skillwire", "pull", odd, "--for", "claude", "http://127.0.0.1:8765/mcp"]
    claude = shlex.split(lines["Claude Code (native)"])
    assert claude == ["claude", "mcp", "add", "--transport", "http", "skills", "http://127.0.0.1:8765/mcp"]


def test_a_name_is_one_visible_line() -> None:
    assert one_line("a\u202eb\x07c\nd") == "a\\u202eb\\x07c\\nd"


def test_the_skill_page_escapes_frontmatter_and_names() -> None:
    skill = facts()
    hostile = SkillEntry(
        SKILL,
        {"name": "tool", "description": "<script>x</script>\u202e", "x": ["<b>", 1]},
        skill.entry.resources,
    )
    page = Pages().skill_page(
        SkillFacts(hostile, False, skill.files, skill.signature, "it names no repository", None),
        b"---\nname: tool\n---\n# Hi <i>there</i>\n",
        None,
        InstallTarget("skills", "http://h/mcp"),
    )
    assert "<script>x" not in page
    assert "&lt;script&gt;x&lt;/script&gt;\\u202e" in page
    assert "[&#34;&lt;b&gt;&#34;, 1]" in page  # a non-string value as JSON, escaped
    assert "<h1>Hi &lt;i&gt;there&lt;/i&gt;</h1>" in page
    assert "unlisted" in page
    assert "the entry&#39;s source annotation is unusable: it names no repository" in page


@pytest.mark.parametrize(
    ("uri", "header"),
    [
        ("skill://a/b/report.pdf", "attachment; filename=\"report.pdf\"; filename*=UTF-8''report.pdf"),
        ("skill://a/b/r%C3%A9sum%C3%A9.md", "attachment; filename=\"r_sum_.md\"; filename*=UTF-8''r%C3%A9sum%C3%A9.md"),
        ("skill://a/b/x%22%3B%20evil%3D1", "attachment; filename=\"x___evil_1\"; filename*=UTF-8''x%22%3B%20evil%3D1"),
    ],
)
def test_a_download_name_cannot_break_its_header(uri: str, header: str) -> None:
    assert attachment_name(uri) == header
