"""`python -m skillwire`: the `skillwire` command, for when its script is not on the PATH."""

from __future__ import annotations

from skillwire.cli.main import entry

if __name__ == "__main__":
    entry()
