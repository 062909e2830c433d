"""The catalog page over plain HTTP (no browser): headers, escaping, read-only, DNS rebinding, per-caller
visibility, keyset paging, downloads, and `skillwire browse` (issue 39). Every server here is a real
`skillwire serve --http` (or `browse`) subprocess on 127.0.0.1."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from urllib.parse import urlencode

import pytest

from servers import LyingServer
from support.cli import run_cli_process
from support.gitserver import WorkRepo, skill_md
from support.page import RTL, browse, fetch, page_base, write_hostile_corpus
from support.servers import EXAMPLES, RunningServer, serve_http
from support.skills import write_skill

EXAMPLE_URIS = [
    "skill://acme/billing/refunds/SKILL.md",
    "skill://code-review/SKILL.md",
    "skill://code-review/security-audit/SKILL.md",
    "skill://git-workflow/SKILL.md",
    "skill://pdf-processing/SKILL.md",
]
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


def listed_uris(html: str) -> list[str]:
    return [unescape(u) for u in re.findall(r'<span class="uri">([^<]*)</span>', html)]


def skill_path(uri: str) -> str:
    return "/skill?" + urlencode({"uri": uri})


def file_path(skill: str, uri: str, *, download: bool = False) -> str:
    return ("/download?" if download else "/file?") + urlencode({"skill": skill, "uri": uri})


@pytest.fixture(scope="module")
def examples_page() -> Iterator[str]:
    with serve_http([str(EXAMPLES), "--no-watch", "--no-digest-cache"]) as server:
        yield page_base(server.url)


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = write_hostile_corpus(tmp_path_factory.mktemp("hostile") / "skills")
    with serve_http([str(root), "--no-watch", "--no-digest-cache"]) as server:
        yield page_base(server.url)


# -- what every answer carries ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/?q=pdf",
        skill_path("skill://code-review/SKILL.md"),
        "/dir?" + urlencode({"skill": "skill://code-review/SKILL.md", "uri": "skill://code-review"}),
        file_path("skill://code-review/SKILL.md", "skill://code-review/checklists/general.md"),
        skill_path("skill://nothing/SKILL.md"),
        "/static/page.css",
    ],
)
def test_every_answer_carries_the_safety_headers(examples_page: str, path: str) -> None:
    answer = fetch(examples_page + path)
    assert answer.status in (200, 404)
    assert answer.headers["content-security-policy"] == CSP
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["referrer-policy"] == "same-origin"


def test_the_list_is_every_listed_skill_in_skills_list_order_with_a_count(examples_page: str) -> None:
    answer = fetch(examples_page + "/")
    assert answer.status == 200
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert listed_uris(answer.text) == EXAMPLE_URIS
    assert '<p class="count" id="count">5 skills</p>' in answer.text
    # No script but our own file, no style but our own sheet: nothing inline, nothing from elsewhere.
    assert re.findall(r"<script[^>]*>", answer.text) == ['<script src="/static/search.js" defer>']
    assert "style=" not in answer.text
    assert "<style" not in answer.text


def test_a_skill_page_shows_frontmatter_files_digests_nested_and_rendered_markdown(examples_page: str) -> None:
    text = fetch(examples_page + skill_path("skill://code-review/SKILL.md")).text
    general = EXAMPLES / "code-review" / "checklists" / "general.md"
    import hashlib

    assert "sha256:" + hashlib.sha256(general.read_bytes()).hexdigest() in text
    assert "<h1>Code review</h1>" in text  # SKILL.md's body, rendered
    assert "<tr><th>name</th><td>code-review</td></tr>" in text  # the frontmatter table
    assert 'id="nested"' in text
    assert "security-audit" in text
    assert "claude mcp add --transport http skills http://127.0.0.1:" in text
    assert "skillwire pull skill://code-review/SKILL.md --for claude http://127.0.0.1:" in text
    # The body's link to a file of the skill is a link to that file's page here.
    assert (
        'href="'
        + file_path("skill://code-review/SKILL.md", "skill://code-review/checklists/general.md").replace("&", "&amp;")
        in text
    )


def test_a_download_is_the_exact_bytes_as_an_attachment_of_a_neutral_type(examples_page: str) -> None:
    skill, uri = "skill://code-review/SKILL.md", "skill://code-review/security-audit/references/owasp.md"
    answer = fetch(examples_page + file_path(skill, uri, download=True))
    assert answer.status == 200
    assert answer.body == (EXAMPLES / "code-review" / "security-audit" / "references" / "owasp.md").read_bytes()
    assert answer.headers["content-type"] == "application/octet-stream"
    assert answer.headers["content-disposition"].startswith('attachment; filename="owasp.md"')
    assert "sandbox" in answer.headers["content-security-policy"]


def test_a_nested_folder_is_browsable(examples_page: str) -> None:
    folder = "/dir?" + urlencode(
        {"skill": "skill://code-review/SKILL.md", "uri": "skill://code-review/security-audit/references"}
    )
    answer = fetch(examples_page + folder)
    assert answer.status == 200
    assert ">owasp.md</a>" in answer.text
    outside = "/dir?" + urlencode({"skill": "skill://code-review/SKILL.md", "uri": "skill://git-workflow"})
    assert fetch(examples_page + outside).status == 404  # a folder of another skill is not this skill's


# -- read-only, and DNS rebinding as for /mcp ------------------------------------------------------------------


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_nothing_but_get_is_answered(examples_page: str, method: str) -> None:
    answer = fetch(examples_page + "/", method=method, body=b"x=1")
    assert answer.status == 405
    assert answer.headers["allow"] == "GET, HEAD"
    assert answer.headers["content-security-policy"] == CSP


def test_a_foreign_host_or_origin_is_refused_as_on_the_mcp_endpoint(examples_page: str) -> None:
    assert fetch(examples_page + "/", headers={"Host": "attacker.example:80"}).status == 421
    assert fetch(examples_page + "/", headers={"Origin": "http://attacker.example"}).status == 403
    assert fetch(examples_page + "/", headers={"Origin": examples_page}).status == 200


def test_no_ui_serves_no_page_and_leaves_the_rest_as_it_was() -> None:
    with serve_http([str(EXAMPLES), "--no-watch", "--no-digest-cache", "--no-ui"]) as server:
        base = page_base(server.url)
        assert fetch(base + "/").status == 404
        assert fetch(base + skill_path(EXAMPLE_URIS[0])).status == 404
        assert fetch(base + "/healthz").status == 200
        assert fetch(base + "/metrics").status == 200
        listed = run_cli_process("ls", server.url, "--json")
        assert [s["uri"] for s in json.loads(listed.text)["skills"]] == EXAMPLE_URIS


# -- escaping -------------------------------------------------------------------------------------------------


def test_hostile_text_is_escaped_everywhere_and_no_link_runs_anything(hostile_page: str) -> None:
    pages = [
        "/",
        "/?q=evil",
        skill_path("skill://evil/SKILL.md"),
        file_path("skill://evil/SKILL.md", "skill://evil/SKILL.md"),
        file_path("skill://evil/SKILL.md", "skill://evil/index.html"),
        file_path("skill://evil/SKILL.md", "skill://evil/pic.svg"),
        "/dir?" + urlencode({"skill": "skill://evil/SKILL.md", "uri": "skill://evil"}),
        "/dir?" + urlencode({"skill": "skill://evil/SKILL.md", "uri": "skill://evil/deep/er"}),
    ]
    for path in pages:
        answer = fetch(hostile_page + path)
        assert answer.status == 200, path
        text = answer.text
        # The only element that runs anything is our own script; no attribute of ours holds a handler.
        assert re.findall(r"<script[^>]*>", text) == ['<script src="/static/search.js" defer>'], path
        assert not re.search(r"<(img|svg|iframe|object|embed)\b", text, re.IGNORECASE), path
        assert not re.search(r"\son\w+\s*=", re.sub(r">[^<]*<", "><", text)), path  # in tags only
        hrefs = re.findall(r'href="([^"]*)"', text)
        assert all(h.startswith(("/", "https://example.invalid/page")) for h in hrefs), (path, hrefs)
        assert RTL not in text, path  # shown as \u202e, never obeyed
        assert "\x07" not in text, path
    skill_page = fetch(hostile_page + skill_path("skill://evil/SKILL.md")).text
    assert "\\u202egnp.exe bell\\x07 end" in skill_page
    assert "read\\u202eme.md" in skill_page
    assert "&lt;script&gt;alert(&#39;desc&#39;)&lt;/script&gt;" in skill_page


@pytest.mark.parametrize("name", ["index.html", "pic.svg"])
def test_html_and_svg_files_are_only_ever_downloaded(hostile_page: str, name: str) -> None:
    answer = fetch(hostile_page + file_path("skill://evil/SKILL.md", f"skill://evil/{name}", download=True))
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/octet-stream"
    assert answer.headers["content-disposition"].startswith(f'attachment; filename="{name}"')
    assert answer.headers["content-security-policy"] == "default-src 'none'; sandbox"


# -- per-caller catalogs ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokens_running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    folder = tmp_path_factory.mktemp("tokens")
    tokens = folder / "tokens.json"
    tokens.write_text(
        json.dumps(
            {
                "tokens": [
                    {"client": "billing", "token": "tok-billing-secret", "audiences": ["acme"]},
                    {"client": "docs", "token": "tok-docs-secret", "audiences": ["docs"]},
                ]
            }
        )
    )
    args = [str(EXAMPLES), "--no-watch", "--no-digest-cache", "--tokens", str(tokens), "--log-requests"]
    args += ["--audience", "skill://acme=acme", "--audience", "skill://pdf-processing=docs"]
    with serve_http(args) as server:
        yield server


@pytest.fixture(scope="module")
def tokens_server(tokens_running: RunningServer) -> str:
    return tokens_running.url


def signed_in(base: str, token: str) -> str:
    """The cookie header a browser sends after the token form accepted `token`."""
    answer = fetch(
        base + "/token",
        method="POST",
        headers={"Origin": base, "Content-Type": "application/x-www-form-urlencoded"},
        body=urlencode({"token": token}).encode(),
    )
    assert answer.status == 303, answer.text
    assert answer.headers["location"] == "/"
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie
    assert "Path=/" in cookie
    return cookie.split(";", 1)[0]


def test_with_tokens_the_page_asks_for_one_and_never_puts_it_in_a_url_or_a_log(
    tokens_running: RunningServer, tokens_server: str
) -> None:
    base = page_base(tokens_server)
    first = fetch(base + "/")
    assert first.status == 303
    assert first.headers["location"] == "/token"
    form = fetch(base + "/token")
    assert 'method="post"' in form.text
    assert 'type="password"' in form.text
    wrong = fetch(
        base + "/token",
        method="POST",
        headers={"Origin": base, "Content-Type": "application/x-www-form-urlencoded"},
        body=b"token=guess",
    )
    assert wrong.status == 401
    assert "set-cookie" not in wrong.headers
    no_origin = fetch(base + "/token", method="POST", body=b"token=tok-billing-secret")
    assert no_origin.status == 403
    assert "set-cookie" not in no_origin.headers
    cookie = signed_in(base, "tok-billing-secret")
    page = fetch(base + "/", headers={"Cookie": cookie})
    assert "tok-billing-secret" not in page.text
    # No line of the server's log (--log-requests on) names a token, the accepted one or the refused one.
    fetch(base + skill_path(EXAMPLE_URIS[0]), headers={"Cookie": cookie})
    assert "tok-billing-secret" not in tokens_running.log()
    assert "guess" not in tokens_running.log()


@pytest.mark.parametrize(
    ("token", "seen"),
    [
        ("tok-billing-secret", {"refunds", "code-review", "security-audit", "git-workflow"}),
        ("tok-docs-secret", {"pdf-processing", "code-review", "security-audit", "git-workflow"}),
    ],
)
def test_a_caller_sees_exactly_what_the_wire_shows_it(tokens_server: str, token: str, seen: set[str]) -> None:
    base = page_base(tokens_server)
    cookie = signed_in(base, token)
    page = fetch(base + "/", headers={"Cookie": cookie}).text
    wire = run_cli_process("ls", tokens_server, "--json", "--header", f"Authorization: Bearer {token}")
    wire_uris = [s["uri"] for s in json.loads(wire.text)["skills"]]
    assert listed_uris(page) == wire_uris
    assert {uri.split("/")[-2] for uri in wire_uris} == seen
    assert f'id="count">{len(seen)} skills<' in page


def test_a_hidden_skill_answers_exactly_as_one_that_does_not_exist(tokens_server: str) -> None:
    base = page_base(tokens_server)
    cookie = {"Cookie": signed_in(base, "tok-docs-secret")}
    hidden, absent = "skill://acme/billing/refunds/SKILL.md", "skill://acme/billing/nothing/SKILL.md"
    hidden_file = "skill://acme/billing/refunds/SKILL.md"
    for kind in ("skill", "file", "download", "dir"):
        if kind == "skill":
            paths = [skill_path(hidden), skill_path(absent)]
        elif kind == "dir":
            paths = ["/dir?" + urlencode({"skill": u, "uri": u.rsplit("/", 1)[0]}) for u in (hidden, absent)]
        else:
            download = kind == "download"
            paths = [
                file_path(hidden, hidden_file, download=download),
                file_path(absent, hidden_file, download=download),
            ]
        a, b = (fetch(base + p, headers=cookie) for p in paths)
        assert a.status == b.status == 404
        assert a.body == b.body
        assert {k: v for k, v in a.headers.items() if k not in ("date", "content-length")} == {
            k: v for k, v in b.headers.items() if k not in ("date", "content-length")
        }
    search = fetch(base + "/?q=refund", headers=cookie).text
    assert "refunds" not in search
    shown = listed_uris(search)
    assert hidden not in shown
    assert re.search(rf'id="count">{len(shown)} skills? match', search)  # the count is of what it may see
    # The other caller sees it; the difference is the token, not the address.
    billing = {"Cookie": signed_in(base, "tok-billing-secret")}
    assert fetch(base + skill_path(hidden), headers=billing).status == 200


# -- paging ------------------------------------------------------------------------------------------------------


def test_paging_follows_the_keyset_cursor_through_every_listed_skill(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for index in range(123):
        write_skill(root / f"s{index:03d}", f"s{index:03d}")
    write_skill(root / "zz-hidden", "zz-hidden")
    with serve_http([str(root), "--no-watch", "--no-digest-cache"]) as server:
        base = page_base(server.url)
        seen: list[str] = []
        path = "/"
        pages = 0
        while True:
            text = fetch(base + path).text
            pages += 1
            assert 'id="count">124 skills<' in text
            seen += listed_uris(text)
            found = re.search(r'<a rel="next" href="([^"]*)"', text)
            if found is None:
                break
            path = unescape(found.group(1))
        assert pages == 3
        wire = run_cli_process("ls", server.url, "--json")
        assert seen == [s["uri"] for s in json.loads(wire.text)["skills"]]
        assert fetch(base + "/?cursor=not-a-cursor").status == 400


# -- skillwire browse --------------------------------------------------------------------------------------------


def test_browse_shows_what_the_server_serves(examples_page: str, own_cache_env: dict[str, str]) -> None:
    with browse(examples_page + "/mcp", env=own_cache_env) as base:
        assert listed_uris(fetch(base + "/").text) == EXAMPLE_URIS
        served = fetch(examples_page + skill_path("skill://code-review/SKILL.md")).text
        browsed = fetch(base + skill_path("skill://code-review/SKILL.md")).text
        for shown in ("<h1>Code review</h1>", 'id="nested"', "checklists/general.md"):
            assert shown in served
            assert shown in browsed
        skill, uri = "skill://code-review/SKILL.md", "skill://code-review/checklists/general.md"
        assert (
            fetch(base + file_path(skill, uri, download=True)).body
            == (EXAMPLES / "code-review" / "checklists" / "general.md").read_bytes()
        )
        assert fetch(base + "/", headers={"Host": "attacker.example:80"}).status == 421


def test_browse_refuses_a_file_whose_bytes_do_not_match_and_reads_only_what_a_page_shows(
    lying: LyingServer, own_cache_env: dict[str, str]
) -> None:
    with browse(lying.url, env=own_cache_env) as base:
        mark = lying.mark()
        fetch(base + "/")
        assert lying.reads_since(mark) == []  # a list reads no file
        skill = "skill://lie/bad-file/SKILL.md"
        mark = lying.mark()
        page = fetch(base + skill_path(skill))
        assert page.status == 200
        assert lying.reads_since(mark) == [skill]  # the skill page reads its SKILL.md only
        bad = "skill://lie/bad-file/references/data.md"
        mark = lying.mark()
        shown = fetch(base + file_path(skill, bad))
        assert lying.reads_since(mark) == [bad]
        assert 'id="refused"' in shown.text
        assert "digest mismatch" in shown.text
        assert "Reference data" not in shown.text
        download = fetch(base + file_path(skill, bad, download=True))
        assert download.status == 502
        assert download.headers["content-type"].startswith("text/html")
        bad_md = fetch(base + skill_path("skill://lie/bad-md/SKILL.md")).text
        assert 'id="skill-md-refused"' in bad_md
        swapped = fetch(base + skill_path("skill://lie/fm-swap/SKILL.md")).text
        assert 'id="skill-md-refused"' in swapped
        assert "Exfiltrate" not in swapped


def test_the_lines_to_paste_are_the_readmes_host_commands_for_this_server(examples_page: str) -> None:
    """The README's `mcp add` lines are the ones tests/e2e/test_host_guides.py runs through the real host CLIs;
    the page's differ from them only by the server's name and address."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    hosts = readme[readme.index("## Skills in the hosts you use") :]
    text = fetch(examples_page + skill_path("skill://code-review/SKILL.md")).text
    pasted = [unescape(line) for line in re.findall(r"<pre><code>(.*?)</code></pre>", text, flags=re.DOTALL)]
    url = examples_page + "/mcp"
    by_host = {line.split()[0]: line for line in pasted if line.split()[0] in ("claude", "codex", "gemini")}
    native = re.search(r"`(claude mcp add --transport http \S+ \S+)`", hosts)
    assert native is not None
    assert by_host["claude"] == native.group(1).replace("work", "skills", 1).replace("http://127.0.0.1:8765/mcp", url)
    for host in ("codex", "gemini"):
        found = re.search(rf"(?:^|`)({host} mcp add [^`\n]*--server work=https://skills.example.com/mcp)", hosts, re.M)
        assert found is not None, host
        expected = found.group(1).replace("work=https://skills.example.com/mcp", f"skills={url}")
        assert by_host[host] == expected
    assert f"skillwire bridge --server skills={url}" in pasted
    vscode = json.loads(next(line for line in pasted if line.startswith('{\n  "servers"')))
    assert vscode == {"servers": {"skills": {"type": "http", "url": url}}}


def test_a_skill_from_a_git_root_shows_its_commit_and_browse_shows_the_same(
    tmp_path: Path, own_cache_env: dict[str, str]
) -> None:
    repo = WorkRepo(tmp_path / "work", tmp_path / "served" / "skills.git")
    repo.write("hello/SKILL.md", skill_md("hello", "Says hello"))
    commit = repo.commit("one")
    repo.push()
    with serve_http([f"git+file://{repo.bare}@{commit}", "--no-watch"], env=own_cache_env) as running:
        shown = f"file://{repo.bare} @ {commit} (hello)"
        served = fetch(page_base(running.url) + skill_path("skill://hello/SKILL.md")).text
        assert f'<td id="source">{shown}</td>' in served
        with browse(running.url, env=own_cache_env) as base:
            browsed = fetch(base + skill_path("skill://hello/SKILL.md")).text
            assert f'<td id="source">{shown}</td>' in browsed


def test_the_page_answers_a_host_name_given_with_allow_host() -> None:
    with serve_http([str(EXAMPLES), "--no-watch", "--no-digest-cache", "--allow-host", "skills.internal"]) as server:
        base = page_base(server.url)
        port = base.rsplit(":", 1)[1]
        named = fetch(base + "/", headers={"Host": f"skills.internal:{port}"})
        assert named.status == 200
        # The lines to paste name the server as the browser reached it.
        page = fetch(base + skill_path(EXAMPLE_URIS[1]), headers={"Host": f"skills.internal:{port}"}).text
        assert f"claude mcp add --transport http skills http://skills.internal:{port}/mcp" in page
        assert fetch(base + "/", headers={"Host": f"elsewhere.internal:{port}"}).status == 421


def test_a_published_catalog_names_its_index_on_the_page(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    store = f"file://{tmp_path / 'store'}"
    published = run_cli_process("publish", str(EXAMPLES), store, env=own_cache_env)
    assert published.code == 0, published.err
    with serve_http([store, "--no-watch"], env=own_cache_env) as running:
        page = fetch(page_base(running.url) + skill_path(EXAMPLE_URIS[1])).text
        found = re.search(r'<td id="index">([0-9a-f]{64}) \(sequence (\d+)\)</td>', page)
        assert found is not None, page
        with browse(running.url, env=own_cache_env) as base:
            browsed = fetch(base + skill_path(EXAMPLE_URIS[1])).text
            assert found.group(0) in browsed


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="OpenSSH's ssh-keygen is not installed")
def test_the_signature_is_the_readers_own_verdict_never_the_servers_claim(
    tmp_path: Path, own_cache_env: dict[str, str]
) -> None:
    key = tmp_path / "publisher"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "publisher", "-f", str(key)], check=True)
    root = tmp_path / "skills"
    shutil.copytree(EXAMPLES, root)
    assert run_cli_process("sign", str(root), "--key", str(key)).code == 0
    # Changed after signing: the server's signature book no longer matches it, so it is sent unsigned.
    (root / "git-workflow" / "SKILL.md").write_text(
        (root / "git-workflow" / "SKILL.md").read_text() + "\nOne more line.\n"
    )
    signature = re.compile(r'<td id="signature" class="verdict-([a-z-]+)">([^<]*)</td>')
    with serve_http([str(root), "--no-watch", "--no-digest-cache"], env=own_cache_env) as running:
        base = page_base(running.url)
        good = signature.search(fetch(base + skill_path("skill://code-review/SKILL.md")).text)
        assert good is not None
        assert good.group(1) == "valid"
        assert "the signature verifies over this manifest, made by the key SHA256:" in good.group(2)
        changed = signature.search(fetch(base + skill_path("skill://git-workflow/SKILL.md")).text)
        assert changed is not None
        assert changed.groups() == ("unsigned", "not signed")
        with browse(running.url, env=own_cache_env) as browsed:
            untrusted = signature.search(fetch(browsed + skill_path("skill://code-review/SKILL.md")).text)
            assert untrusted is not None
            assert untrusted.group(1) == "untrusted"
        added = run_cli_process("trust", "add", "acme-publisher", f"{key}.pub", env=own_cache_env)
        assert added.code == 0, added.err
        with browse(running.url, env=own_cache_env) as browsed:
            trusted = signature.search(fetch(browsed + skill_path("skill://code-review/SKILL.md")).text)
            assert trusted is not None
            assert trusted.group(1) == "verified"
            assert trusted.group(2).startswith("signed by acme-publisher (SHA256:")
            still_bad = signature.search(fetch(browsed + skill_path("skill://git-workflow/SKILL.md")).text)
            assert still_bad is not None
            assert still_bad.group(1) == "unsigned"


def test_the_search_box_ranks_as_find_skills_does_and_works_without_the_tool() -> None:
    with serve_http([str(EXAMPLES), "--no-watch", "--no-digest-cache"]) as with_tool:
        ranked = listed_uris(fetch(page_base(with_tool.url) + "/?q=fill+pdf+forms").text)
        assert ranked[0] == "skill://pdf-processing/SKILL.md"
    with serve_http([str(EXAMPLES), "--no-watch", "--no-digest-cache", "--no-search-tool"]) as without:
        assert listed_uris(fetch(page_base(without.url) + "/?q=fill+pdf+forms").text) == ranked
