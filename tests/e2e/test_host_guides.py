"""The README's host guides, followed as written by the host programs themselves (issue 20 item 9).

Every `claude|codex|gemini mcp add …` command is taken from the README's "Skills in the hosts you use" section (so
a wrong edit there fails here), with only the example upstream URL replaced by a real `skillwire serve` on
127.0.0.1, and run by the real host CLI from npm (`.tools/hosts/`, `scripts/install-tools`): Claude Code 2.1.328,
Codex 0.169.0 and Gemini CLI 0.61.0, each with HOME in the test's folder and no sign-in. The host then reads back
the entry it wrote; Claude Code's and Gemini CLI's `mcp list` also start the bridge and connect to it (Codex's
`mcp list` makes no connection, and every other Codex command needs a sign-in).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.bridge import write_skill
from support.conformance import absent_tool_reason, missing_tools_reason, node_binary
from support.servers import REPO_ROOT, RunningServer, serve_http

README = REPO_ROOT / "README.md"
HOSTS = REPO_ROOT / ".tools" / "hosts" / "node_modules" / ".bin"
EXAMPLE_UPSTREAM = "https://skills.example.com/mcp"  # the README's placeholder for the user's server
EXAMPLE_SERVE = "http://127.0.0.1:8765/mcp"  # the README's `skillwire serve` address (Claude Code, native)
# No update checks, telemetry or other calls home from the hosts: only 127.0.0.1 is reached.
QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "NO_COLOR": "1",
}


def hosts_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Skills in the hosts you use")
    return text[start : text.index("\n## ", start + 1)]


def readme_commands(host: str) -> list[list[str]]:
    """Every `HOST mcp add …` command in the README's hosts section, in order, split as a shell would."""
    found = re.findall(rf"(?:^|`)({host} mcp add [^`\n]+)", hosts_section(), flags=re.MULTILINE)
    # A command elided with "…" is a fragment in the prose (an option to add), not one to run as it stands.
    return [shlex.split(command) for command in found if "…" not in command]


def real(argv: list[str], upstream: RunningServer) -> list[str]:
    """The README's command with its example addresses pointed at the test's real `skillwire serve`."""
    return [arg.replace(EXAMPLE_UPSTREAM, upstream.url).replace(EXAMPLE_SERVE, upstream.url) for arg in argv]


def host_binary(name: str) -> Path:
    script = HOSTS / name
    if not script.exists() or missing_tools_reason() is not None:
        pytest.skip(absent_tool_reason(name, "hosts"))
    return script.resolve()


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("guides-upstream")
    write_skill(root, "pdf-forms", "Fill PDF forms from a spreadsheet.", "Read references/FORMS.md.")
    with serve_http([str(root), "--no-digest-cache", "--no-watch"]) as server:
        yield server


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / "project").mkdir(parents=True)
    return folder


def run_host(script: Path, argv: list[str], home: Path, *, cwd: Path | None = None) -> str:
    """Run a host CLI (`argv[0]` is its name, as in the README) with HOME at `home`; its output, or a failure."""
    bin_dirs = [str(Path(sys.executable).parent), str(node_binary().parent), "/usr/bin", "/bin"]
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join(bin_dirs),  # `skillwire` is the project venv's, found as a host finds it
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        **QUIET,
    }
    command = [str(script), *argv[1:]]
    with script.open("rb") as head:
        native = head.read(4) == b"\x7fELF"  # Claude Code ships a native binary; Codex and Gemini a Node script
    if not native:
        command = [str(node_binary()), *command]  # a Node entry script: run with the pinned Node 22
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd or home / "project",
        stdin=subprocess.DEVNULL,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"{shlex.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def test_the_readme_names_each_hosts_command() -> None:
    claude = readme_commands("claude")
    assert len(claude) == 3, claude  # native (`serve` over HTTP), through the bridge, and with a bridge.toml
    assert claude[0][:5] == ["claude", "mcp", "add", "--transport", "http"]
    assert all(command[command.index("--") + 1 :][:2] == ["skillwire", "bridge"] for command in claude[1:])
    assert len(readme_commands("codex")) == 1
    (gemini,) = readme_commands("gemini")
    # User scope, and `--` before the bridge's own arguments (Gemini would read `--server` as its own option).
    assert gemini[3:5] == ["--scope", "user"]
    assert gemini[gemini.index("--") + 1] == "bridge"


def test_claude_code_adds_and_connects_to_the_bridge_and_to_serve_as_the_readme_says(
    upstream: RunningServer, home: Path
) -> None:
    claude = host_binary("claude")
    native, bridged, configured = (real(command, upstream) for command in readme_commands("claude"))
    # The last command takes the bridge's configuration from bridge.toml; give it a real upstream.
    config = home / ".config" / "skillwire" / "bridge.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[servers.work]\nurl = "{upstream.url}"\n')
    run_host(claude, native, home)
    run_host(claude, bridged, home)
    # A second bridge under another name, from the bridge.toml form (one name can hold one server).
    run_host(claude, [*configured[:3], "skills-toml", *configured[4:]], home)
    # A server that cannot start, so that "Connected" is seen to mean something.
    run_host(claude, ["claude", "mcp", "add", "broken", "--", "skillwire", "bridge", "--no-such-option"], home)

    listed = run_host(claude, ["claude", "mcp", "list"], home)
    lines = {line.split(":", 1)[0]: line for line in listed.splitlines() if ": " in line}
    bridge_args = shlex.join(bridged[bridged.index("--") + 1 :])
    assert f"skills: {bridge_args} - ✔ Connected" in listed, listed
    assert "skills-toml: skillwire bridge - ✔ Connected" in listed, listed
    assert upstream.url in lines["work"], listed
    assert "✔ Connected" in lines["work"], listed
    assert "Connected" not in lines["broken"].replace("Disconnected", ""), listed

    entry = run_host(claude, ["claude", "mcp", "get", "skills"], home)
    assert "Command: skillwire" in entry
    assert f"Args: {shlex.join(bridged[bridged.index('--') + 2 :])}" in entry


def test_codex_reads_back_the_bridge_from_its_mcp_add_and_from_the_readmes_config_toml(
    upstream: RunningServer, home: Path, tmp_path: Path
) -> None:
    codex = host_binary("codex")
    (command,) = (real(c, upstream) for c in readme_commands("codex"))
    run_host(codex, command, home)
    added = codex_list(codex, home)
    bridge = command[command.index("--") + 1 :]
    assert added == [{"name": "skills", "command": bridge[0], "args": bridge[1:], "enabled": True}]

    # The README's ~/.codex/config.toml, written by hand instead, is read back as the same server.
    toml = re.search(r"```toml\n(\[mcp_servers\.skills\]\n.*?)```", hosts_section(), flags=re.DOTALL)
    assert toml is not None
    other = tmp_path / "other-home"
    (other / "project").mkdir(parents=True)
    (other / ".codex").mkdir()
    (other / ".codex" / "config.toml").write_text(toml.group(1).replace(EXAMPLE_UPSTREAM, upstream.url))
    assert codex_list(codex, other) == added


def codex_list(codex: Path, home: Path) -> list[dict[str, object]]:
    output = run_host(codex, ["codex", "mcp", "list", "--json"], home)
    listed = json.loads(output[output.index("[") : output.rindex("]") + 1])
    return [
        {
            "name": server["name"],
            "command": server["transport"]["command"],
            "args": server["transport"]["args"],
            "enabled": server["enabled"],
        }
        for server in listed
    ]


def gemini_servers(listed: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r"^\S+ (\S+): .* - (\w+)$", listed, flags=re.MULTILINE)}


def test_gemini_cli_keeps_every_bridge_at_user_scope_and_connects_in_a_trusted_folder(
    upstream: RunningServer, home: Path
) -> None:
    gemini = host_binary("gemini")
    (command,) = (real(c, upstream) for c in readme_commands("gemini"))
    name = command[command.index("user") + 1]
    run_host(gemini, command, home)
    # A second bridge under another name is kept beside the first. It is given the README's `--timeout 600000`:
    # `mcp list` otherwise waits 5 s for a server, less than a bridge may take to start on a loaded machine.
    second = [*command[:5], "more", "--timeout", "600000", *command[6:]]
    run_host(gemini, second, home)
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    bridge = command[command.index(name) + 1 :]
    bridge.remove("--")
    assert settings["mcpServers"][name] == {"command": bridge[0], "args": bridge[1:]}
    assert settings["mcpServers"]["more"]["args"] == bridge[1:]

    # In a folder not yet trusted, every MCP server is disabled, the user's too (what the README warns of).
    untrusted = gemini_servers(run_host(gemini, ["gemini", "mcp", "list"], home))
    assert untrusted == {name: "Disabled", "more": "Disabled"}, untrusted

    # Trusted as Gemini's trust dialog records it: both are kept, enabled, and the bridge answers.
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(home / "project"): "TRUST_FOLDER"}))
    trusted = gemini_servers(run_host(gemini, ["gemini", "mcp", "list"], home))
    assert set(trusted) == {name, "more"}, trusted
    assert "Disabled" not in trusted.values()
    assert trusted["more"] == "Connected", trusted

    # The same name again replaces the first entry (the README's reason for one bridge with several --server).
    replaced = [*command[: command.index("--")], "--", "bridge", "--local", str(home / "project")]
    run_host(gemini, replaced, home)
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    assert settings["mcpServers"][name]["args"] == ["bridge", "--local", str(home / "project")]
