"""Which upstreams the bridge serves, from the command line or a TOML file, and where its approvals live.

The file (default `<user config dir>/skillwire/bridge.toml`) has one table per upstream; the table's
name is the origin label the model and the person see:

    approvals = "~/somewhere/approvals.sqlite"     # optional; default bridge-approvals.sqlite beside this file

    [servers.work]
    url = "https://skills.example.com/mcp"
    headers = { Authorization = "Bearer ..." }

    [servers.tools]
    command = ["python", "-m", "my_skills_server"]  # or one string, split like a shell would
    env = { MY_TOKEN = "..." }

    [servers.mine]
    local = ["~/my-skills"]                         # skill folders on this machine

Everything here is plain data (no connection is made), so `skillwire approve` and `skillwire approvals`
read the same configuration as the bridge without starting anything.
"""

from __future__ import annotations

import shlex
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs
from mcp.client.stdio import get_default_environment

from skillwire.catalog.git import is_git_spec
from skillwire.core.address import address_as_url
from skillwire.core.errors import BridgeConfigError, SkillwireError
from skillwire.host.identity import validate_origin_label
from skillwire.host.origins import ServerOrigin

if TYPE_CHECKING:
    from skillwire.catalog.git_tree import GitTreeSource

CONFIG_FILE_NAME = "bridge.toml"
APPROVALS_FILE_NAME = "bridge-approvals.sqlite"


def config_dir() -> Path:
    return platformdirs.user_config_path("skillwire")


def default_config_path() -> Path:
    return config_dir() / CONFIG_FILE_NAME


def bridge_approvals_path() -> Path:
    """The bridge's own approval store (also `approve`'s and `pull --for`'s default): never the user-wide
    one another host may write (`host.approvals.default_approvals_path`)."""
    return config_dir() / APPROVALS_FILE_NAME


@dataclass(frozen=True)
class LocalUpstream:
    label: str
    paths: tuple[Path, ...]
    # Git roots, read from git's object database at the commit fetched at start (catalog/git_tree.py).
    trees: tuple[GitTreeSource, ...] = ()


@dataclass(frozen=True)
class CommandLineUpstreams:
    """The upstream options as given on the command line (before they are validated)."""

    servers: Sequence[str] = ()  # LABEL=URL, or LABEL alone for the trailing `-- COMMAND ARGS`
    server_commands: Sequence[str] = ()  # LABEL=COMMAND ARGS
    headers: Sequence[str] = ()  # LABEL:Name: value
    local: Sequence[str] = ()  # DIR
    trailing_command: Sequence[str] | None = None  # what followed `--`

    @property
    def given(self) -> bool:
        return bool(self.servers or self.server_commands or self.local or self.trailing_command)


@dataclass(frozen=True)
class BridgeConfig:
    servers: tuple[ServerOrigin, ...] = ()
    local: tuple[LocalUpstream, ...] = ()
    approvals: Path = field(default_factory=bridge_approvals_path)
    config_file: Path | None = None  # the TOML file read, if any
    from_command_line: bool = False  # the upstreams came from flags, not (only) from a file
    trust: str = "off"  # publisher signatures (host/trust.py): off, warn or require
    trust_file: Path | None = None  # trusted keys; None: the user's `skillwire trust` file

    def labels(self) -> list[str]:
        return [s.label for s in self.servers] + [loc.label for loc in self.local]

    def server(self, label: str) -> ServerOrigin | None:
        return next((s for s in self.servers if s.label == label), None)

    def approve_command(self, label: str, uri: str, *, command: str = "approve") -> str:
        """The exact shell command that approves `uri` of `label` in this bridge's store."""
        words = ["skillwire", command]
        if self.config_file is not None and self.config_file != default_config_path():
            words += ["--config", str(self.config_file)]
        if self.approvals != bridge_approvals_path():
            words += ["--approvals", str(self.approvals)]
        if self.trust != "off":
            # The approval binds the verified signer too (host/trust.py): approve with the same trust.
            words += ["--trust", self.trust] + (["--trust-file", str(self.trust_file)] if self.trust_file else [])
        origin = self.server(label)
        if self.from_command_line and origin is not None:
            # The upstream exists only on the bridge's command line: repeat what connects to it.
            if origin.url is not None:
                words += ["--server", f"{label}={origin.url}"]
                # Header values are often secrets; the person fills them in, the model never sees them.
                words += [w for name, _ in origin.headers for w in ("--header", f"{label}:{name}: <value>")]
            elif origin.command is not None:
                words += ["--server-command", f"{label}={shlex.join(origin.command)}"]
        words += [label, uri]
        return shlex.join(words)


def _label(value: str, where: str) -> str:
    try:
        return validate_origin_label(value)
    except ValueError as exc:
        raise BridgeConfigError(f"{where}: {exc}") from None


def _string_map(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise BridgeConfigError(f'{where} must be a table of strings, e.g. {{ Name = "value" }}')
    return tuple(value.items())


def _paths(value: Any, where: str, base: Path) -> list[Path | GitTreeSource]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(p, str) and p for p in items):
        raise BridgeConfigError(f"{where} must be a folder or a list of folders")
    return [_local(p, where, base) for p in items]


def _local_upstream(label: str, found: list[Path | GitTreeSource]) -> LocalUpstream:
    folders = tuple(f for f in found if isinstance(f, Path))
    return LocalUpstream(label, folders, tuple(f for f in found if not isinstance(f, Path)))


def _local(spec: str, where: str, base: Path) -> Path | GitTreeSource:
    """A local upstream's folder, or a git root (`git+URL@REF#SUBDIR`) fetched once and read from git's
    object database at that commit (the bridge serves it as it was at start; restart to fetch again)."""
    if not is_git_spec(spec):
        return _folder((base / Path(spec).expanduser()).resolve(), where)
    from skillwire.catalog.git import GitError
    from skillwire.catalog.git_catalog import GitRootSpec, read_git_root

    try:
        root = GitRootSpec.parse(spec)
        if root.prefix:
            raise GitError(f"{root.source}: a local upstream takes no =PREFIX")
        return read_git_root(root)
    except SkillwireError as exc:
        raise BridgeConfigError(f"{where}: {exc}") from None


def _folder(path: Path, where: str) -> Path:
    if not path.is_dir():
        raise BridgeConfigError(f"{where}: {path} is not a folder")
    return path


def _from_table(label: str, table: Any, base: Path, where: str) -> ServerOrigin | LocalUpstream:
    if not isinstance(table, Mapping):
        raise BridgeConfigError(f"{where} must be a table with url, command or local")
    kinds = [k for k in ("url", "command", "local") if k in table]
    if len(kinds) != 1:
        raise BridgeConfigError(
            f"{where}: give exactly one of url, command or local (got {', '.join(kinds) or 'none'})"
        )
    unknown = sorted(set(table) - {"url", "command", "local", "headers", "env"})
    if unknown:
        raise BridgeConfigError(f"{where}: unknown key {unknown[0]!r} (known: url, command, local, headers, env)")
    kind = kinds[0]
    if kind == "local":
        return _local_upstream(label, _paths(table["local"], f"{where}.local", base))
    headers = _string_map(table.get("headers", {}), f"{where}.headers")
    env = _string_map(table.get("env", {}), f"{where}.env")
    if kind == "url":
        url = table["url"]
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise BridgeConfigError(f"{where}.url must be an http:// or https:// URL, got {url!r}")
        if env:
            raise BridgeConfigError(f"{where}: env applies to a command, not a url")
        return ServerOrigin(label, url=url, headers=headers)
    command = table["command"]
    words = shlex.split(command) if isinstance(command, str) else command
    if not isinstance(words, list) or not words or not all(isinstance(w, str) and w for w in words):
        raise BridgeConfigError(f"{where}.command must be a non-empty list of strings (or one command line)")
    if headers:
        raise BridgeConfigError(f"{where}: headers apply to a url, not a command")
    if env:
        # The SDK gives a stdio server only a safe default environment (PATH, HOME, ...), and a given one
        # replaces it: add the configured variables to that default instead of starting without PATH.
        env = (*get_default_environment().items(), *env)
    return ServerOrigin(label, command=tuple(words), env=env)


# A minimal bridge.toml, shown by `skillwire bridge --help` (and checked to parse by the tests): one
# server over HTTP, one over stdio, one folder of local skills.
CONFIG_EXAMPLE = """\
[servers.work]
url = "https://skills.example.com/mcp"
headers = { Authorization = "Bearer TOKEN" }   # optional

[servers.tools]
command = ["python", "-m", "my_skills_server"]

[servers.mine]
local = ["~/my-skills"]
"""


def read_config_file(path: Path) -> tuple[list[ServerOrigin | LocalUpstream], Path | None]:
    """The upstreams of a TOML file and its `approvals` path (None when not set)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BridgeConfigError(
            f"{path}: no such file; create it (`skillwire bridge --help` shows the format) or name upstreams with "
            "--server"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BridgeConfigError(f"{path}: cannot read it: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BridgeConfigError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"servers", "approvals"})
    if unknown:
        raise BridgeConfigError(f"{path}: unknown top-level key {unknown[0]!r} (known: servers, approvals)")
    servers = data.get("servers", {})
    if not isinstance(servers, Mapping) or not servers:
        raise BridgeConfigError(f"{path}: no upstreams; add a [servers.LABEL] table with url, command or local")
    base = path.parent
    upstreams = [
        _from_table(_label(label, f"{path}: servers.{label}"), table, base, f"{path}: servers.{label}")
        for label, table in servers.items()
    ]
    approvals = data.get("approvals")
    if approvals is not None and (not isinstance(approvals, str) or not approvals):
        raise BridgeConfigError(f"{path}: approvals must be a file path")
    return upstreams, (base / Path(approvals).expanduser()).resolve() if approvals else None


def _split_label(value: str, sep: str, flag: str, example: str) -> tuple[str, str]:
    label, found, rest = value.partition(sep)
    if not found or not label or not rest.strip():
        raise BridgeConfigError(f"{flag} wants {example}, got {value!r}")
    return _label(label, flag), rest.strip()


def _from_command_line(given: CommandLineUpstreams) -> list[ServerOrigin | LocalUpstream]:
    headers: dict[str, list[tuple[str, str]]] = {}
    for raw in given.headers:
        label, header = _split_label(raw, ":", "--header", "LABEL:Name: value")
        name, found, value = header.partition(":")
        if not found or not name.strip():
            raise BridgeConfigError(f"--header wants LABEL:Name: value, got {raw!r}")
        headers.setdefault(label, []).append((name.strip(), value.strip()))
    upstreams: list[ServerOrigin | LocalUpstream] = []
    trailing_used = False
    for raw in given.servers:
        if "=" not in raw:
            label = _label(raw, "--server")
            if not given.trailing_command:
                raise BridgeConfigError(
                    f"--server {raw} names no URL; write --server {raw}=URL or end with -- COMMAND ARGS"
                )
            if trailing_used:
                raise BridgeConfigError(
                    "only one --server LABEL can take the trailing -- COMMAND; use --server-command"
                )
            trailing_used = True
            upstreams.append(ServerOrigin(label, command=tuple(given.trailing_command)))
            continue
        label, url = _split_label(raw, "=", "--server", "LABEL=URL")
        if not url.startswith(("http://", "https://")):
            meant = address_as_url(url)
            if meant is not None:  # an address with its scheme left out, not a command
                raise BridgeConfigError(f"--server {label}: {url!r} has no scheme; write --server {label}={meant}")
            raise BridgeConfigError(
                f"--server {label}: {url!r} is not an http(s):// URL; "
                f"for a stdio server write --server-command {label}='COMMAND ARGS'"
            )
        upstreams.append(ServerOrigin(label, url=url, headers=tuple(headers.pop(label, []))))
    for raw in given.server_commands:
        label, line = _split_label(raw, "=", "--server-command", "LABEL='COMMAND ARGS'")
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise BridgeConfigError(f"--server-command {label}: cannot split {line!r}: {exc}") from None
        upstreams.append(ServerOrigin(label, command=tuple(words)))
    if given.trailing_command and not trailing_used:
        raise BridgeConfigError("a trailing -- COMMAND needs a --server LABEL (with no =URL) to name it")
    if headers:
        raise BridgeConfigError(f"--header for {next(iter(headers))!r}, but no --server {next(iter(headers))}=URL")
    if given.local:
        upstreams.append(_local_upstream("local", [_local(p, "--local", Path.cwd()) for p in given.local]))
    return upstreams


def load_config(
    given: CommandLineUpstreams | None = None,
    *,
    config_file: Path | None = None,
    approvals: Path | None = None,
) -> BridgeConfig:
    """Upstreams from the flags and/or `config_file`; the default file only when neither names any."""
    given = given or CommandLineUpstreams()
    upstreams: list[ServerOrigin | LocalUpstream] = []
    file_approvals: Path | None = None
    read_file = config_file if config_file is not None else (None if given.given else default_config_path())
    if read_file is not None:
        upstreams, file_approvals = read_config_file(read_file)
    upstreams += _from_command_line(given)
    seen: set[str] = set()
    for upstream in upstreams:
        if upstream.label in seen:
            raise BridgeConfigError(
                f"two upstreams are labelled {upstream.label!r}; labels name origins and must differ"
            )
        seen.add(upstream.label)
    if not upstreams:
        raise BridgeConfigError("no upstreams: give --server LABEL=URL, --server-command, --local DIR or --config FILE")
    chosen = approvals if approvals is not None else file_approvals
    return BridgeConfig(
        servers=tuple(u for u in upstreams if isinstance(u, ServerOrigin)),
        local=tuple(u for u in upstreams if isinstance(u, LocalUpstream)),
        approvals=chosen.expanduser().resolve() if chosen is not None else bridge_approvals_path(),
        config_file=read_file,
        from_command_line=given.given,
    )
