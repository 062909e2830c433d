"""Path safety against a running `skillwire serve` over HTTP on 127.0.0.1 (issue 11, standing test).

Hostile URIs in every encoding (`../`, `%2e%2e`, `%2f`, `%5c`, double encoding, overlong UTF-8), NUL,
very long URIs, Unicode look-alikes, NFC/NFD and case variants, for `resources/read`, `skills/get`
and `resources/directory/read`; then races after the scan: a served file swapped for a symlink to a
file outside, for a FIFO, for a directory, and a skill folder swapped for a symlink to a copy
outside. Each answer is a specific JSON-RPC error, nothing hangs, the server keeps serving, and the
kernel (inotify) sees no process open or read anything in the folder outside the root.
"""

from __future__ import annotations

import json
import os
import shutil
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from support import inotify, skills
from support.rawhttp import RawSession
from support.servers import serve_http

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603  # the documented "changed on the server; fetch its entry again"
CANARY = "CANARY-OUTSIDE-9d2e"
TIMEOUT = 15.0  # per request: a hang fails the test, it never stalls the suite

pytestmark = pytest.mark.skipif(not inotify.available() or not hasattr(os, "mkfifo"), reason="needs Linux inotify")


def skill(root: Path, name: str, files: dict[str, str]) -> None:
    skills.write_skill(root, name, files, description=f"The {name} skill.")


@contextmanager
def tree_and_server(base: Path) -> Iterator[tuple[Path, Path, str]]:
    root, outside = base / "skills", base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(CANARY)
    (outside / "passwd").write_text(CANARY)
    cafe = unicodedata.normalize("NFC", "café.md")
    skill(root, "good", {"ref.md": "good reference\n", "references/notes.md": "notes\n", f"references/{cafe}": "nfc\n"})
    for name in ("swap-file", "swap-fifo", "swap-dir", "swap-folder", "swap-references"):
        skill(root, name, {"data.md": f"data of {name}\n", "references/more.md": "more\n"})
    with serve_http([str(root), "--no-watch", "--no-digest-cache"]) as server:
        yield root, outside, server.url


HOSTILE_FILE_URIS = [
    "skill://good/../outside/secret.txt",
    "skill://good/../../outside/secret.txt",
    "skill://good/%2e%2e/%2e%2e/outside/secret.txt",
    "skill://good/%2E%2E/secret.txt",
    "skill://good/.%2e/secret.txt",
    "skill://good/..%2f..%2foutside%2fsecret.txt",
    "skill://good/%2fetc%2fpasswd",
    "skill://good/..%5c..%5coutside%5csecret.txt",
    "skill://good/..\\..\\outside\\secret.txt",
    "skill://good/%252e%252e/%252e%252e/outside/secret.txt",  # double encoding
    "skill://good/%c0%ae%c0%ae/%c0%ae%c0%ae/outside/secret.txt",  # overlong UTF-8 for "."
    "skill://good/%e0%80%ae%e0%80%ae/secret.txt",
    "skill://good/%c0%af../secret.txt",  # overlong "/"
    "skill://good/ref.md%00.png",
    "skill://good/ref.md\u0000",
    "skill://good/./ref.md",
    "skill://good//ref.md",
    "skill://good/ref.md/",
    "skill://good/ref.md?x=1",
    "skill://good/ref.md#frag",
    "skill:///etc/passwd",
    "skill://%2e%2e/outside/secret.txt",
    "skill://../outside/secret.txt",
    "file:///etc/passwd",
    "skill://good/REF.md",  # case variants name other files
    "skill://GOOD/ref.md",
    "skill://good/Ref.MD",
    "skill://good/references/" + unicodedata.normalize("NFD", "café.md"),  # NFD of an NFC file name
    "skill://good/references/cafe%CC%81.md",
    "skill://good/ref\u2024md",  # one-dot leader
    "skill://good/ｒｅｆ.md",  # fullwidth
    "skill://ɡood/ref.md",  # Latin small script g
    "skill://good/ref.md\u200b",
    "skill://good/" + "a" * 100_000,
    "skill://good/" + "a/" * 20_000 + "x",
    "skill://good/" + "%2e%2e/" * 5_000 + "outside/secret.txt",
    "",
    "skill://",
    "not a uri",
]


def error_of(session: RawSession, method: str, params: dict[str, Any]) -> tuple[int, str]:
    answer = session.call(method, params)
    assert "error" in answer, f"{method} {str(params)[:120]} succeeded; an error was expected"
    code, message = answer["error"]["code"], answer["error"]["message"]
    assert CANARY not in json.dumps(answer)
    return code, message


def prepare(root: Path, outside: Path) -> None:
    """Identical copies outside the root of what the races link to: the same bytes, so the digest
    check alone cannot tell; only refusing to follow the link keeps them unopened."""
    shutil.copyfile(root / "swap-file" / "data.md", outside / "data-copy.md")
    shutil.copytree(root / "swap-folder", outside / "swap-folder")
    shutil.copytree(root / "swap-references" / "references", outside / "references")


def swap(root: Path, outside: Path, kind: str) -> tuple[str, str]:
    """Change the tree after the scan (opening nothing outside); returns (URI to read, what was done)."""
    if kind == "file-to-symlink":
        target = root / "swap-file" / "data.md"
        target.unlink()
        target.symlink_to(outside / "data-copy.md")
        return "skill://swap-file/data.md", "a served file became a symlink to an identical file outside"
    if kind == "file-to-fifo":
        target = root / "swap-fifo" / "data.md"
        target.unlink()
        os.mkfifo(target)
        return "skill://swap-fifo/data.md", "a served file became a FIFO"
    if kind == "file-to-directory":
        target = root / "swap-dir" / "data.md"
        target.unlink()
        target.mkdir()
        return "skill://swap-dir/data.md", "a served file became a directory"
    if kind == "skill-folder-to-symlink":
        folder = root / "swap-folder"
        shutil.rmtree(folder)
        folder.symlink_to(outside / "swap-folder")
        return "skill://swap-folder/data.md", "a skill folder became a symlink to an identical copy outside"
    assert kind == "sub-folder-to-symlink"
    folder = root / "swap-references" / "references"
    shutil.rmtree(folder)
    folder.symlink_to(outside / "references")
    return "skill://swap-references/references/more.md", "a folder in a skill became a symlink outside"


RACES = ["file-to-symlink", "file-to-fifo", "file-to-directory", "skill-folder-to-symlink", "sub-folder-to-symlink"]


def test_hostile_uris_and_races_get_specific_errors_and_open_nothing_outside(tmp_path: Path) -> None:
    with tree_and_server(tmp_path) as (root, outside, url):
        session = RawSession(url, timeout=TIMEOUT)  # a hang is a timeout error, never a stalled suite
        good = session.call("resources/read", {"uri": "skill://good/ref.md"})
        assert good["result"]["contents"][0]["text"] == "good reference\n"
        prepare(root, outside)
        with inotify.OpenWatch([outside, outside / "swap-folder", outside / "references"]) as watch:
            watch.events()  # the test's own copying
            hostile = 0
            for uri in HOSTILE_FILE_URIS:
                for method in ("resources/read", "skills/get", "resources/directory/read"):
                    code, message = error_of(session, method, {"uri": uri})
                    hostile += 1
                    assert code == INVALID_PARAMS, (method, uri[:80], code, message)
            for kind in RACES:
                # One race at a time, each against a snapshot that still publishes the path: the first
                # read is refused as changed (and makes the server rescan); after that rescan the path
                # is no longer published at all.
                uri, what = swap(root, outside, kind)
                code, message = error_of(session, "resources/read", {"uri": uri})
                assert code == INTERNAL_ERROR, (what, code, message)
                assert "changed on the server" in message, (what, message)
                code, message = error_of(session, "resources/read", {"uri": uri})
                assert code == INVALID_PARAMS, (what, code, message)
            opened = watch.events()
        assert opened == [], f"the server opened or read files outside the root: {opened}"
        # Still serving; a skill folder swapped for a symlink is no longer published, never followed.
        again = session.call("resources/read", {"uri": "skill://good/ref.md"})
        assert again["result"]["contents"][0]["text"] == "good reference\n"
        uris = {s["uri"] for s in session.call("skills/list", {})["result"]["skills"]}
        assert "skill://good/SKILL.md" in uris
        assert "skill://swap-folder/SKILL.md" not in uris
        print(f"\npath-safety matrix: {hostile} hostile requests and {len(RACES)} races, each a specific error")


def test_a_body_that_is_not_utf8_gets_a_json_rpc_error_and_the_server_keeps_serving(tmp_path: Path) -> None:
    with tree_and_server(tmp_path) as (_, _, url):
        session = RawSession(url, timeout=TIMEOUT)
        overlong = (
            b'{"jsonrpc":"2.0","id":99,"method":"resources/read","params":{"uri":"skill://good/\xc0\xae\xc0\xae/x"}}'
        )
        status, answer = session.post(overlong)
        assert 400 <= status < 500, status
        assert answer is not None
        assert "error" in answer, answer
        assert CANARY not in json.dumps(answer)
        good = session.call("resources/read", {"uri": "skill://good/ref.md"})
        assert good["result"]["contents"][0]["text"] == "good reference\n"
