"""Skills straight from a git repository: `git+URL@REF#SUBDIR` as a root, fetched, read, proven.

- **Syntax** (`GitSource.parse`): `git+https://HOST/ORG/REPO@REF#SUBDIR`, `git+ssh://…`, `git+file:///…`
  (`git+http://` too, for a server on this machine). REF is a branch, a tag or a full commit id (none:
  the remote's default branch); SUBDIR limits the root to a folder. `=PREFIX` follows, as for folders.
- **Implementation**: the `git` command, run without a shell (`GIT_TERMINAL_PROMPT=0`, so a fetch that
  would ask for a password fails at once instead of hanging). Authentication is entirely git's: the
  user's credential helpers, SSH agent and `~/.ssh/config`. A URL carrying a password is refused, so
  no secret is ever written into the cache's config. The `git` command rather than dulwich because it
  is what holds the user's credentials and SSH set-up already, and it does partial fetches; the
  timing comparison with dulwich is `bench/git_bench.py`.
- **Cache** (`GitCache`): one bare repository per URL under the user cache directory
  (`git/<hash of the URL>/repo.git`), fetched shallow (`--depth=1`) and, with SUBDIR, partial
  (`--filter=blob:none`, then only the blobs under SUBDIR in one batch). A ref is first resolved with
  `git ls-remote` (one round trip, no pack): a poll that finds the same commit fetches nothing.
- **Trees** (`tree`): never checked out. Each commit's tree is listed from git's tree objects and its
  files read from the object database on demand (`catalog/git_tree.py`, the one owner of both): nothing
  is written but git's own objects, so a hostile tree has nothing to escape from. A symlink, a
  submodule and a Git LFS pointer are never served; each is reported as an ignored path with its reason.
- **Signed commits** (`commit_signer`): a commit signed with `gpg.format=ssh` carries an SSHSIG
  signature (namespace `git`) over the commit object without its `gpgsig` header; it is checked with
  the same `sshsig` code that checks signed skills, against the keys the caller passes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.git_tree import LFS_POINTER_HEAD as LFS_POINTER_HEAD
from skillwire.catalog.git_tree import GitObjects, GitTreeSource, last_line
from skillwire.core.errors import GitError as GitError  # raised here, defined with every other error
from skillwire.core.provenance import PROVENANCE_META_KEY as PROVENANCE_META_KEY
from skillwire.core.provenance import is_commit_id

GIT_SCHEMES = ("git+https://", "git+http://", "git+ssh://", "git+file://")
GIT_NAMESPACE = "git"  # the SSHSIG namespace git signs commits in
_GIT_TIMEOUT_S = 600.0  # a clone of a large repository over a slow link; never forever


def is_git_spec(spec: str) -> bool:
    return spec.startswith(GIT_SCHEMES)


@dataclass(frozen=True)
class GitSource:
    """One repository at one ref, optionally limited to a folder (`SUBDIR`)."""

    url: str  # what git is given: https://…, ssh://…, file:///…
    ref: str | None = None  # branch, tag or full commit id; None: the remote's HEAD
    subdir: tuple[str, ...] = ()

    @classmethod
    def parse(cls, spec: str) -> GitSource:
        """`git+URL[@REF][#SUBDIR]` (without any `=PREFIX`); `GitError` saying what is wrong."""
        has_password = _redacted(spec) != spec
        spec = _redacted(spec)  # every message below may quote it; a password never goes further
        if not is_git_spec(spec):
            raise GitError(f"{spec!r} is not a git root (git+https://, git+ssh://, git+http:// or git+file://)")
        rest, _, fragment = spec[len("git+") :].partition("#")
        scheme_end = rest.index("://") + 3
        path_start = rest.find("/", scheme_end)
        if path_start < 0:
            raise GitError(f"{spec!r} names no repository path")
        at = rest.rfind("@", path_start)
        url, ref = (rest[:at], rest[at + 1 :]) if at >= 0 else (rest, None)
        parts = urlsplit(url)
        if has_password:
            raise GitError(
                f"{_without_userinfo(url)}: a password in the URL would be stored in the cache; "
                "let git's credential helper or SSH agent authenticate instead"
            )
        if parts.scheme != "file" and not parts.hostname:
            raise GitError(f"{spec!r} names no host")
        if ref is not None:
            _check_ref(ref, spec)
        subdir = tuple(s for s in fragment.strip("/").split("/") if s)
        for segment in subdir:
            if segment in (".", "..") or segment.lower() == ".git" or "\0" in segment:
                raise GitError(f"{spec!r}: SUBDIR may not contain {segment!r}")
        return cls(url, ref, subdir)

    @property
    def shown(self) -> str:
        """The repository as printed and recorded: without any user name (never a secret)."""
        return _without_userinfo(self.url)

    @property
    def name(self) -> str:
        """The repository's own name (`skills` for `…/org/skills.git`): what a SUBDIR-less root is linted as."""
        last = [part for part in urlsplit(self.url).path.split("/") if part]
        return (last[-1] if last else "repository").removesuffix(".git")

    @property
    def pinned(self) -> bool:
        """A full commit id never moves; a tag is treated the same once resolved (see `GitRoot`)."""
        return self.ref is not None and is_commit_id(self.ref)

    def __str__(self) -> str:
        text = "git+" + self.shown + (f"@{self.ref}" if self.ref else "")
        return text + ("#" + "/".join(self.subdir) if self.subdir else "")


_ABBREVIATED_COMMIT = re.compile(r"[0-9a-f]{4,63}")
_PASSWORD = re.compile(r"(://[^/@:]*):[^/@]*@")


def _redacted(text: str) -> str:
    """`text` with the password of any `user:password@` taken out."""
    return _PASSWORD.sub(r"\1:***@", text)


def _without_userinfo(url: str) -> str:
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def _check_ref(ref: str, spec: str) -> None:
    # The same rules as `git check-ref-format`, plus no leading '-' (never an option to git).
    bad = (
        not ref
        or ref.startswith(("-", "/", "."))
        or ref.endswith(("/", ".", ".lock"))
        or ".." in ref
        or "@{" in ref
        or "//" in ref
        or any(c in ref for c in " ~^:?*[\\\x7f")
        or any(ord(c) < 32 for c in ref)
    )
    if bad:
        raise GitError(f"{spec!r}: {ref!r} is not a branch, tag or commit id")


@dataclass(frozen=True)
class Resolved:
    """What a ref names right now: the commit, and whether it is a branch (followed) or fixed."""

    commit: str
    kind: str  # "branch", "tag", "commit" or "HEAD"

    @property
    def moves(self) -> bool:
        return self.kind in ("branch", "HEAD")


def git_environment() -> dict[str, str]:
    """The environment every git command runs in: never a prompt, never the user's editor or pager."""
    env = dict(os.environ)
    env.update(
        GIT_TERMINAL_PROMPT="0",  # a password prompt would hang a server: fail instead
        GIT_ASKPASS="",
        SSH_ASKPASS="",
        GCM_INTERACTIVE="never",
        GIT_PAGER="cat",
        LC_ALL="C",  # stderr is parsed for one line to show; the same words whatever the locale
    )
    # BatchMode: ssh fails instead of asking for a passphrase or a host key; the agent still answers.
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)  # a hook's environment must not redirect the cache's commands
    return env


def is_bare_repository(path: Path) -> bool:
    """Whether `path` is a bare git repository (`HEAD`, `objects/`, `refs/`): it holds no skill folders, so
    whoever wrote it as a folder root meant `git+file://PATH`."""
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def is_git_repository(path: Path) -> bool:
    """Whether `path` is a git repository, bare or a clone holding `.git` (a `file://PATH` store location
    without a published catalog that is one was meant as `git+file://PATH`)."""
    return is_bare_repository(path) or (path / ".git").exists()


def as_git_root(path: Path) -> str:
    """The `git+file://` root naming the repository at `path` (what a hint suggests)."""
    return f"git+file://{path.resolve()}"


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("skillwire")) / "git"


class GitCache:
    """The bare repository that caches one URL, and the trees of the commits served from it."""

    def __init__(self, source: GitSource, cache_dir: Path | None = None) -> None:
        self.source = source
        base = cache_dir if cache_dir is not None else default_cache_dir()
        self.dir = base / hashlib.sha256(source.url.encode()).hexdigest()[:24]
        self.repo = self.dir / "repo.git"
        self.objects = GitObjects(self.repo, git_environment)

    # -- running git ---------------------------------------------------------------------------------

    def _git(self, *args: str, stdin: bytes | None = None, check: str | None = None) -> bytes:
        """Run `git --git-dir=REPO ARGS`; with `check`, a failure is a `GitError` starting with it."""
        command = ["git", f"--git-dir={self.repo}", *args]
        try:
            done = subprocess.run(
                command,
                input=stdin,
                capture_output=True,
                env=git_environment(),
                timeout=_GIT_TIMEOUT_S,
                check=False,
            )
        except FileNotFoundError:
            raise GitError("git is not installed (a git root needs the git command on the PATH)") from None
        except subprocess.TimeoutExpired:
            raise GitError(f"{check or 'git'}: git did not finish in {_GIT_TIMEOUT_S:.0f} s") from None
        if done.returncode != 0:
            if check is None:
                raise GitError(last_line(done.stderr))
            raise GitError(f"{check}: {last_line(done.stderr)}")
        return done.stdout

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One process at a time fetches into or writes trees of this cache (servers may share it)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / "lock", "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _ensure_repo(self, object_format: str | None = None) -> None:
        """The bare cache repository; with `object_format` (`sha1` or `sha256`, the remote's, known from a
        commit id), one of that hash: git fetches nothing into a repository of the other one."""
        if (self.repo / "HEAD").exists():
            if object_format is None or self._object_format() == object_format:
                return
            # Made before the remote's hash was known (`ls-remote` needs a repository): it holds nothing
            # of this remote, so it is made again (the trees, in their own folder, are kept).
            shutil.rmtree(self.repo)
        self.dir.mkdir(parents=True, exist_ok=True)
        chosen = [f"--object-format={object_format}"] if object_format is not None else []
        self._git("init", "--bare", "--quiet", *chosen, check="cannot create the git cache")
        # A named remote, so a partial fetch records it as the promisor of the blobs it left out.
        self._git("remote", "add", "origin", self.source.url, check="cannot create the git cache")
        self._git("config", "gc.auto", "0")  # no background gc racing a reader of this cache

    def _object_format(self) -> str:
        return self._git("rev-parse", "--show-object-format", check="reading the git cache").decode().strip()

    # -- resolving and fetching ----------------------------------------------------------------------

    def has_commit(self, commit: str) -> bool:
        try:
            self._git("cat-file", "-e", f"{commit}^{{commit}}")
        except GitError:
            return False
        return True

    def resolve(self) -> Resolved:
        """Which commit the ref names on the remote now (one `git ls-remote`, no objects fetched)."""
        source = self.source
        where = source.shown
        if source.pinned:
            assert source.ref is not None
            return Resolved(source.ref, "commit")
        self._ensure_repo()
        if source.ref is None:
            patterns = ["HEAD"]
        else:
            patterns = [f"refs/heads/{source.ref}", f"refs/tags/{source.ref}", f"refs/tags/{source.ref}^{{}}"]
        out = self._git("ls-remote", "--", source.url, *patterns, check=f"cannot read {where}")
        found: dict[str, str] = {}
        for line in out.decode("utf-8", "replace").splitlines():
            oid, _, name = line.partition("\t")
            found[name] = oid
        if source.ref is None:
            if "HEAD" not in found:
                raise GitError(f"{where} has no default branch (HEAD); name a branch, tag or commit with @REF")
            return Resolved(found["HEAD"], "HEAD")
        branch = found.get(f"refs/heads/{source.ref}")
        if branch is not None:
            return Resolved(branch, "branch")
        tag = found.get(f"refs/tags/{source.ref}^{{}}") or found.get(f"refs/tags/{source.ref}")
        if tag is not None:
            return Resolved(tag, "tag")
        hint = ""
        if _ABBREVIATED_COMMIT.fullmatch(source.ref):
            # A remote is asked for refs by name: an abbreviated id matches none, and git cannot fetch one.
            hint = (
                f"; {source.ref!r} looks like an abbreviated commit id: give the full one "
                f"(40 hex digits, 64 for SHA-256; `git rev-parse {source.ref}` in a clone prints it)"
            )
        raise GitError(f"{where} has no branch or tag {source.ref!r}{hint}")

    def fetch(self, resolved: Resolved) -> str:
        """Make sure the resolved commit and its trees are in the cache; the commit fetched.

        Shallow; partial when SUBDIR is given. For a branch, the commit fetched may be newer than
        the one `ls-remote` saw (a push in between): the fetched one is served, whole. A SHA-256 repository
        (a 64-digit commit id) is cached in a SHA-256 repository.
        """
        self._ensure_repo("sha256" if len(resolved.commit) == 64 else "sha1")
        source = self.source
        if self.has_commit(resolved.commit):
            return resolved.commit
        options = ["fetch", "--quiet", "--depth=1", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no"]
        if source.subdir:
            options.append("--filter=blob:none")
        target, want = self._refspec(resolved)
        self._git(*options, "origin", target, check=f"cannot fetch {source.shown}@{source.ref or 'HEAD'}")
        self.objects.restart()  # the batch reader then certainly sees the new pack
        commit = self._git("rev-parse", "--verify", "--quiet", f"{want}^{{commit}}", check=f"{source.shown}")
        return commit.decode().strip()

    def _refspec(self, resolved: Resolved) -> tuple[str, str]:
        """What to fetch for `resolved`, and the name it then has in the cache."""
        if resolved.kind == "commit":
            return resolved.commit, resolved.commit
        if resolved.kind == "HEAD":
            return "+HEAD:refs/skillwire/HEAD", "refs/skillwire/HEAD"
        group = "heads" if resolved.kind == "branch" else "tags"
        return (
            f"+refs/{group}/{self.source.ref}:refs/skillwire/{group}/{self.source.ref}",
            f"refs/skillwire/{group}/{self.source.ref}",
        )

    # -- the rollback rule: a followed branch only moves forward (catalog/git_catalog.py) -----------

    @property
    def _served_ref(self) -> str:
        return f"refs/skillwire/served/{self.source.ref or 'HEAD'}"

    def last_served(self) -> str | None:
        """The commit a server last served from this ref (kept as a ref in the cache: across restarts)."""
        if not (self.repo / "HEAD").exists():
            return None
        try:
            found = self._git("rev-parse", "--verify", "--quiet", f"{self._served_ref}^{{commit}}")
        except GitError:
            return None
        return found.decode().strip() or None

    def remember_served(self, commit: str) -> None:
        self._git("update-ref", self._served_ref, commit, check="cannot record the commit served")

    def descends(self, resolved: Resolved, commit: str, previous: str) -> bool:
        """Whether `commit` has `previous` in its history. The cache is shallow, so when it cannot tell, the
        history since `previous`'s committer time is fetched and it looks again; a history whose dates go
        backwards past that point reads as not descending (fail closed)."""
        if self._is_ancestor(previous, commit):
            return True
        since = self._committed_at(previous)
        if self._committed_at(commit) < since:
            return False  # committed before it: a replay of an older commit (or a history dated backwards)
        target, _ = self._refspec(resolved)
        # The same filter as every fetch of this cache: a filter given once becomes the cache's default.
        partial = ["--filter=blob:none"] if self.source.subdir else []
        try:
            self._git(
                "fetch", "--quiet", f"--shallow-since={since - 1}", *partial, "--no-tags",
                "--no-write-fetch-head", "--recurse-submodules=no", "origin", target,
                check=f"cannot fetch the history of {self.source.shown}@{self.source.ref or 'HEAD'}",
            )  # fmt: skip
        except GitError:
            # Nothing on the branch as new as `previous` (git says so in words that differ by transport): the
            # resolve and fetch just before reached the remote, so this is no outage. Fail closed.
            return False
        self.objects.restart()
        return self._is_ancestor(previous, commit)

    def _committed_at(self, commit: str) -> int:
        """The committer time, read from the commit object itself (`git show -s` still diffs the trees: on a
        tree bomb, 1.8 GB and counting)."""
        header = self.commit_object(commit).partition(b"\n\n")[0]
        for line in header.split(b"\n"):
            if line.startswith(b"committer "):
                return int(line.rsplit(b" ", 2)[-2])
        raise GitError(f"{self._where(commit)}: the commit has no committer line")

    def _is_ancestor(self, older: str, newer: str) -> bool:
        try:
            self._git("merge-base", "--is-ancestor", older, newer)
        except GitError:
            return False
        return True

    # -- trees, read from the object database (catalog/git_tree.py) ---------------------------------

    def tree(self, commit: str, root: SkillRoot) -> GitTreeSource:
        """The commit's tree under SUBDIR as served under `root` (its prefix and scheme); listed on first
        use (`GitError` for a tree over the bounds), its blobs fetched then when the fetch was partial."""
        shown = "git+" + self.source.shown
        return GitTreeSource(
            self.repo,
            self.objects,
            commit,
            self.source.subdir,
            root,
            shown,
            git_environment,
            prefetch=lambda oids: self._prefetch(commit, oids),
        )

    def _where(self, commit: str) -> str:
        sub = "#" + "/".join(self.source.subdir) if self.source.subdir else ""
        return f"{self.source.shown} at {commit[:12]}{sub}"

    def _prefetch(self, commit: str, oids: Sequence[str]) -> None:
        """Fetch, in one request, the blobs a partial fetch left out that this tree needs (only SUBDIR's).

        Listed with `rev-list --missing=print`, which never fetches: asking `cat-file` would fetch
        each missing blob on its own, one round trip per file.
        """
        if not oids or not (self.repo / "config").read_text().count("promisor"):
            return
        listed = self._git("rev-list", "--objects", "--no-walk", "--missing=print", commit, check="reading the cache")
        wanted = set(oids)
        missing = [oid for line in listed.decode().splitlines() if line.startswith("?") and (oid := line[1:]) in wanted]
        if not missing:
            return
        self._git(
            "-c",
            "fetch.negotiationAlgorithm=noop",
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            "--filter=blob:none",
            "--stdin",
            "origin",
            stdin="\n".join(missing).encode() + b"\n",
            check=f"cannot fetch the files of {self.source.shown}#{'/'.join(self.source.subdir)}",
        )

    def commit_object(self, commit: str) -> bytes:
        return self._git("cat-file", "commit", commit, check=self._where(commit))


# -- signed commits ------------------------------------------------------------------------------------


_SIGNATURE_HEADERS = (b"gpgsig ", b"gpgsig-sha256 ")


def split_commit_signature(commit_object: bytes, *, sha256: bool = False) -> tuple[bytes, str] | None:
    """(the bytes git signed, the armored signature) of a commit object; None when it is unsigned.

    Git signs the commit object without its signature headers (and their continuation lines, each
    starting with a space); the signature is the header's value, one line per continuation. A SHA-1
    repository's header is `gpgsig`, a SHA-256 repository's `gpgsig-sha256` (`sha256`: the commit's id
    is 64 digits); both are left out of what was signed, as git does.
    """
    wanted = b"gpgsig-sha256 " if sha256 else b"gpgsig "
    header_end = commit_object.find(b"\n\n")
    headers = commit_object if header_end < 0 else commit_object[:header_end]
    lines = headers.split(b"\n")
    kept: list[bytes] = []
    signature: list[bytes] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith(_SIGNATURE_HEADERS):
            value = [line.partition(b" ")[2]]
            index += 1
            while index < len(lines) and lines[index].startswith(b" "):
                value.append(lines[index][1:])
                index += 1
            if line.startswith(wanted) and not signature:
                signature = value
            continue
        kept.append(line)
        index += 1
    if not signature:
        return None
    body = b"" if header_end < 0 else commit_object[header_end:]
    return b"\n".join(kept) + body, b"\n".join(signature).decode("ascii", "replace")


def commit_signer(commit_object: bytes, trusted: Sequence[str], *, sha256: bool = False) -> str:
    """The fingerprint of the trusted key whose SSH signature the commit carries; `GitError` saying
    why not (unsigned, a GPG signature, does not verify, or signed by a key not in `trusted`). `sha256`:
    the commit is of a SHA-256 repository (its signature is in `gpgsig-sha256`)."""
    split = split_commit_signature(commit_object, sha256=sha256)
    if split is None:
        raise GitError("the commit is not signed")
    payload, armored = split
    if "BEGIN SSH SIGNATURE" not in armored:
        raise GitError("the commit is signed with GPG or X.509, not SSH (gpg.format=ssh)")
    import sshsig
    from sshsig.ssh_public_key import PublicKey, ssh_key_fingerprint_sha256_str

    try:
        key = sshsig.check_signature(payload, armored, namespace=GIT_NAMESPACE)
    except (sshsig.InvalidSignature, NotImplementedError, ValueError) as exc:
        raise GitError(f"the commit's SSH signature does not verify ({exc})") from None
    fingerprint = ssh_key_fingerprint_sha256_str(key)
    for line in trusted:
        try:
            candidate = PublicKey.from_openssh_str(line.strip())
        except (ValueError, NotImplementedError, IndexError):
            continue
        if ssh_key_fingerprint_sha256_str(candidate) == fingerprint:
            return fingerprint
    raise GitError(f"the commit is signed by {fingerprint}, which is not a trusted key (skillwire trust add)")
