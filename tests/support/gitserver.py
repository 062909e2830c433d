"""Real git repositories for the tests: made with the git command, served over smart HTTP on 127.0.0.1
by `git http-backend` (the CGI program git ships) behind a small threaded HTTP server.

The served repositories allow what GitHub and GitLab allow: partial fetches (`uploadpack.allowFilter`)
and fetching any commit by id (`uploadpack.allowAnySHA1InWant`). `down()` answers every request 503,
as a git host in an outage does.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from support import skills

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip()


def skill_md(name: str, description: str, body: str = "") -> str:
    return skills.skill_md(name, description, body=f"{body}\n")


class WorkRepo:
    """A working repository that commits and pushes to a bare one (the served repository)."""

    def __init__(self, work: Path, bare: Path, object_format: str = "sha1") -> None:
        self.work, self.bare = work, bare
        bare.mkdir(parents=True)
        git(bare, "init", "--bare", "-q", "-b", "main", f"--object-format={object_format}")
        git(bare, "config", "uploadpack.allowFilter", "true")
        git(bare, "config", "uploadpack.allowAnySHA1InWant", "true")
        git(bare, "config", "http.receivepack", "true")
        work.mkdir(parents=True)
        git(work, "init", "-q", "-b", "main", f"--object-format={object_format}")
        git(work, "remote", "add", "origin", str(bare))

    def write(self, rel: str, text: str) -> None:
        path = self.work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def write_bytes(self, rel: str, data: bytes) -> None:
        path = self.work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def commit(self, message: str, *extra: str) -> str:
        git(self.work, "add", "-A")
        git(self.work, *extra, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.work, "rev-parse", "HEAD")

    def push(self, *args: str) -> None:
        git(self.work, "push", "-q", *args, "origin", "HEAD:refs/heads/main")


class _Backend(BaseHTTPRequestHandler):
    root: Path
    state: dict[str, bool]

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._cgi()

    def do_POST(self) -> None:
        self._cgi()

    def _cgi(self) -> None:
        if self.state["down"]:
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = {
            "PATH": os.environ["PATH"],
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]  # protocol v2
        done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False)
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class GitHTTPServer:
    def __init__(self, root: Path, server: ThreadingHTTPServer, state: dict[str, bool]) -> None:
        self.root, self.server, self.state = root, server, state

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{name}"

    def down(self, is_down: bool = True) -> None:
        self.state["down"] = is_down


@contextmanager
def git_http_server(root: Path) -> Iterator[GitHTTPServer]:
    """Serve every bare repository under `root` at http://127.0.0.1:PORT/NAME."""
    state = {"down": False}
    handler = type("Handler", (_Backend,), {"root": root, "state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield GitHTTPServer(root, server, state)
    finally:
        server.shutdown()
        server.server_close()
