"""`core/` is the protocol's rules and nothing else (issue 38): it starts no thread or process, opens,
writes or lists no file, and neither installs a logging handler nor sets `logging`'s globals. Metrics, logs
and traces do all three; they live in `ops/`, the floor above.

Read from the AST of every module under `src/skillwire/core/` (nothing is imported to judge it). What
counts as doing I/O, by how it is written:
- importing a module whose point is I/O or concurrency (`threading`, `subprocess`, `tempfile`, `shutil`,
  `socket`, `sqlite3`, `asyncio`, `logging.config`, `logging.handlers`, ...);
- calling `open`, `print` or `input`, an `os` function that touches the file system, processes or the
  environment, a `Path` method that reads, writes or lists (`open`, `read_text`, `write_text`, `mkdir`,
  `iterdir`, ...), or a `logging` function that changes the program's logging (`basicConfig`,
  `addHandler`, `setLevel`, `disable`, `captureWarnings`, ...);
- reading `sys.stdout`, `sys.stderr` or `sys.stdin`.
The scanner is first run on a planted source so the test can fail.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from support.imports import MODULES

CORE = "skillwire.core"

# A module imported for its I/O or its concurrency: importing one at all is the start of either.
IO_MODULES = {
    "threading",
    "_thread",
    "multiprocessing",
    "concurrent",
    "subprocess",
    "tempfile",
    "shutil",
    "socket",
    "selectors",
    "signal",
    "atexit",
    "sqlite3",
    "asyncio",
    "anyio",
    "fcntl",
    "mmap",
    "glob",
    "logging.config",
    "logging.handlers",
    "prometheus_client",
    "opentelemetry",
}
# Calls by name (a builtin, or a function imported by name).
IO_FUNCTIONS = {"open", "print", "input", "basicConfig", "fileConfig", "dictConfig", "mkdtemp", "mkstemp"}
# `os.<name>`: the file system, processes, the environment.
OS_FUNCTIONS = {
    "open",
    "fdopen",
    "read",
    "write",
    "mkdir",
    "makedirs",
    "remove",
    "unlink",
    "rmdir",
    "removedirs",
    "rename",
    "renames",
    "replace",
    "listdir",
    "scandir",
    "walk",
    "stat",
    "lstat",
    "chmod",
    "chown",
    "symlink",
    "link",
    "truncate",
    "system",
    "popen",
    "fork",
    "kill",
    "putenv",
    "unsetenv",
    "getenv",
    "environ",
    "getcwd",
    "chdir",
}
# `<anything>.<name>(...)`: the `Path` methods that touch the disk, and the logging calls that change the
# program's logging (on the module, the root logger or any logger). Specific enough that no pure code in
# `core/` spells them (`str.replace` and `re.Match.start` are not here; `os.replace` is above).
IO_METHODS = {
    "open",
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "mkdir",
    "touch",
    "unlink",
    "rmdir",
    "iterdir",
    "glob",
    "rglob",
    "symlink_to",
    "hardlink_to",
    "addHandler",
    "removeHandler",
    "setLevel",
    "setFormatter",
    "basicConfig",
    "captureWarnings",
    "disable",
    "setLoggerClass",
    "setLogRecordFactory",
    "dictConfig",
    "fileConfig",
}
SYS_STREAMS = {"stdout", "stderr", "stdin", "__stdout__", "__stderr__", "__stdin__"}


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _io_module(name: str) -> bool:
    return any(name == banned or name.startswith(banned + ".") for banned in IO_MODULES)


def io_uses(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Each place a module starts a thread or process, touches a file or changes logging: (line, what)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _io_module(alias.name):
                    yield node.lineno, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if _io_module(node.module) or _io_module(f"{node.module}.{alias.name}"):
                    yield node.lineno, f"from {node.module} import {alias.name}"
                elif node.module == "os" and alias.name in OS_FUNCTIONS:
                    yield node.lineno, f"from os import {alias.name}"
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in IO_FUNCTIONS:
                yield node.lineno, f"{func.id}(...)"
            elif isinstance(func, ast.Attribute):
                dotted = _dotted(func)
                if dotted.startswith("os.") and dotted.split(".")[1] in OS_FUNCTIONS:
                    yield node.lineno, f"{dotted}(...)"
                elif func.attr in IO_METHODS:
                    yield node.lineno, f"{dotted}(...)"  # `write_text(...)` when called on an expression
        elif isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted in {f"sys.{stream}" for stream in SYS_STREAMS} or dotted == "os.environ":
                yield node.lineno, dotted


def test_the_scanner_finds_planted_io() -> None:
    planted = ast.parse(
        "import threading\n"
        "import logging\n"
        "from tempfile import NamedTemporaryFile\n"
        "from pathlib import Path\n"
        "def pure(text):\n"
        "    return text.replace('a', 'b').strip(), re.match('x', text).start(), logging.getLogger(text)\n"
        "def busy(path):\n"
        "    threading.Thread(target=run).start()\n"
        "    with open(path) as f:\n"
        "        f.read()\n"
        "    Path(path).write_text('x')\n"
        "    Path(path).open('rb')\n"
        "    logging.getLogger().addHandler(logging.StreamHandler())\n"
        "    logging.basicConfig(level=10)\n"
        "    os.environ['X'] = '1'\n"
        "    sys.stderr.write('x')\n"
    )
    assert sorted(io_uses(planted)) == [
        (1, "import threading"),
        (3, "from tempfile import NamedTemporaryFile"),
        (9, "open(...)"),
        (11, "write_text(...)"),
        (12, "open(...)"),
        (13, "addHandler(...)"),
        (14, "logging.basicConfig(...)"),
        (15, "os.environ"),
        (16, "sys.stderr"),
    ]


def test_core_starts_no_thread_opens_no_file_and_installs_no_handler() -> None:
    found = [
        f"{module} line {line}: {what}"
        for module, path in MODULES.items()
        if module == CORE or module.startswith(CORE + ".")
        for line, what in sorted(set(io_uses(ast.parse(path.read_text(encoding="utf-8")))))
    ]
    assert not found, "core/ is pure; move this to ops/ (or the layer that does the I/O):\n" + "\n".join(found)


def test_core_is_where_the_scan_looks() -> None:
    # An empty scan passes trivially: the package must still be found, with its rules in it.
    assert {f"{CORE}.uri", f"{CORE}.fields", f"{CORE}.verify"} <= set(MODULES)
