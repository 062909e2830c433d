"""`python -m skillwire`: the `skillwire` command, for when its script is not on the PATH."""

from __future__ import annotations

import sys

from skillwire.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
