"""Every public class and function reads `__module__ == "skillwire"` from the moment its module is
imported, by any route, before the root attribute is ever touched (issue 24 item 7: it used to read
`skillwire.core.errors` until `skillwire.SkillNotFound` was first used). A fresh interpreter is the only
place where nothing has been imported yet, hence a subprocess."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import importlib, inspect, sys
import skillwire
table = skillwire._EXPORTS
wrong = []
for module_name, names in table.items():
    module = importlib.import_module(module_name)  # directly: the root's __getattr__ is not involved
    for name in names:
        value = vars(module)[name]
        if (inspect.isclass(value) or inspect.isfunction(value)) and value.__module__ != "skillwire":
            wrong.append(f"{module_name}.{name}: {value.__module__}")
touched = [n for names in table.values() for n in names if n in vars(skillwire)]
print("\\n".join(wrong) or "ok", len(touched))
"""


def test_module_is_skillwire_before_the_root_attribute_is_touched() -> None:
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["ok", "0"], done.stdout + done.stderr


def test_direct_import_of_one_module_reads_skillwire() -> None:
    program = "import skillwire.core.errors as e; print(e.SkillNotFound.__module__, repr(e.SkillNotFound))"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "skillwire <class 'skillwire.SkillNotFound'>", done.stderr
