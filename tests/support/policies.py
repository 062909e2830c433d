"""Policies that stand in for a person in tests."""

from __future__ import annotations

from skillwire.host.policy import ApproveAll


class PersonSaysYes(ApproveAll):
    """A person who approves every load they are asked about: `asks_a_person`, so approvals are persisted.

    (`ApproveAll` itself is automatic, and its yeses are never written to an approval store.)
    """

    asks_a_person = True
