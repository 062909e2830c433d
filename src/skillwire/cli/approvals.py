"""`skillwire approvals [revoke LABEL URI]`: the bridge's approvals (implemented beside `approve`)."""

from __future__ import annotations

from skillwire.cli.approve import add_approvals_parser as add_parser

__all__ = ["add_parser"]
