"""`skillwire pull` refuses to go back to an older published index, over a real S3-compatible store (SeaweedFS on
127.0.0.1) and real `skillwire serve s3://` processes.

A catalog published twice is pulled: `skills.lock` records the second index's id and sequence (the
`skills/list` result's `_meta["io.skillwire/index"]`). The pointer is then rolled back to the first
index's bytes (a bucket writer's replay, as in test_objectstore_rollback.py) and a fresh replica, with
no state file to remember better, serves it: the next pull exits 1 with one line naming both sequences
and writes nothing; `--check` says the same; `--allow-older` pulls it and says so. The Python client
API reads the same claim (`Listing.index`).
"""

from __future__ import annotations

import json
import secrets
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import obstore

from skillwire.catalog.store import POINTER_KEY as POINTER
from skillwire.client.connection import open_skills_client
from skillwire.core.published_index import PublishedIndex
from support.cli import run_cli
from support.seaweed import SeaweedS3
from support.servers import serve_http


def _skill(root: Path, name: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}.\n---\nBody.\n")


class Balancer:
    """A TCP load balancer in one thread per connection: every new connection goes to `backend` (a URL), so
    one address (the lock's origin) is served first by one replica, then by another."""

    def __init__(self) -> None:
        self.backend = ""
        self.listener = socket.create_server(("127.0.0.1", 0))

    def serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            parts = urlsplit(self.backend)
            upstream = socket.create_connection((parts.hostname, parts.port))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_copy, args=(a, b), daemon=True).start()


def _copy(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


@contextmanager
def balancer() -> Iterator[Balancer]:
    made = Balancer()
    threading.Thread(target=made.serve, daemon=True).start()
    try:
        yield made
    finally:
        made.listener.close()


def _at(backend: str, front: Balancer) -> str:
    """`backend`'s URL with the balancer's address: what clients are given."""
    host, port = front.listener.getsockname()[:2]
    return urlsplit(backend)._replace(netloc=f"{host}:{port}").geturl()


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


async def _listed_index(url: str) -> PublishedIndex | None:
    async with open_skills_client(url=url) as skills:
        return (await skills.list_skills()).index


def test_pull_refuses_an_older_index_from_a_fresh_replica(seaweedfs: SeaweedS3, tmp_path: Path) -> None:
    prefix = "pull-older-" + secrets.token_hex(4)
    root = tmp_path / "skills"
    _skill(root, "alpha")
    assert run_cli("publish", str(root), seaweedfs.url(prefix), env=seaweedfs.env).code == 0
    store = seaweedfs.store(prefix)
    first = bytes(obstore.get(store, POINTER).bytes())
    _skill(root, "beta")
    assert run_cli("publish", str(root), seaweedfs.url(prefix), env=seaweedfs.env).code == 0
    old, new = json.loads(first), json.loads(bytes(obstore.get(store, POINTER).bytes()))
    assert new["sequence"] > old["sequence"]

    dest = tmp_path / "pulled"
    replica = [seaweedfs.url(prefix), "--poll", "0", "--replica-state"]
    with balancer() as front:
        with serve_http([*replica, str(tmp_path / "first.json")], env=seaweedfs.env) as server:
            front.backend = server.url
            url = _at(server.url, front)
            assert anyio.run(_listed_index, url) == PublishedIndex(new["id"], new["sequence"])
            done = run_cli("pull", "--to", str(dest), url)
            assert done.code == 0, done.err
        lock = json.loads((dest / "skills.lock").read_text())
        assert lock["index"] == {"id": new["id"], "sequence": new["sequence"]}
        assert sorted(s["name"] for s in lock["skills"]) == ["alpha", "beta"]

        obstore.put(store, POINTER, first)  # the replay; a fresh replica (no state of its own) follows it
        before = _tree(dest)
        with serve_http([*replica, str(tmp_path / "fresh.json")], env=seaweedfs.env) as stale:
            front.backend = stale.url  # the same address, now answered by the fresh replica
            assert anyio.run(_listed_index, url) == PublishedIndex(old["id"], old["sequence"])
            refused = run_cli("pull", "--to", str(dest), url)
            assert refused.code == 1, refused.err
            lines = refused.err.strip().splitlines()
            assert len(lines) == 1, refused.err
            assert f"sequence {old['sequence']}" in lines[0]
            assert f"sequence {new['sequence']}" in lines[0]
            assert "refusing to go back" in lines[0]
            assert refused.out == b""
            assert _tree(dest) == before  # nothing written: not the lock, not a skill

            checked = run_cli("pull", "--check", "--to", str(dest), url)
            assert checked.code == 1
            shown = f"older            the server serves index {old['id'][:12]} (sequence {old['sequence']})"
            assert shown in checked.out.decode()
            assert _tree(dest) == before

            allowed = run_cli("pull", "--allow-older", "--to", str(dest), url)
            assert allowed.code == 0, allowed.err
            assert "as --allow-older asks" in allowed.err
            assert len(allowed.err.strip().splitlines()) == 1, allowed.err
    lock = json.loads((dest / "skills.lock").read_text())
    assert lock["index"] == {"id": old["id"], "sequence": old["sequence"]}
    assert sorted(s["name"] for s in lock["skills"]) == ["alpha", "beta"]  # beta is kept: pull never prunes


def test_a_folder_server_names_no_index_and_pulls_as_before(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _skill(root, "alpha")
    dest = tmp_path / "pulled"
    with serve_http([str(root)]) as server:
        assert anyio.run(_listed_index, server.url) is None
        done = run_cli("pull", "--to", str(dest), server.url)
        assert done.code == 0, done.err
    assert "index" not in json.loads((dest / "skills.lock").read_text())
