"""The suite's SEP-2640 client scenarios, with a client that uses only SkillHost's public API.

The suite's mock server serves `skill://pdf-processing` with a tampered SKILL.md in the verify-*
scenarios (same-length body, appended bytes, or a frontmatter swap with honest digests). Passing
means: the client listed, loaded SKILL.md, detected the lie, and never read FORMS.md. Run at the
suite's default protocol version (2025-11-25 handshake) and at 2026-07-28.
"""

from __future__ import annotations

import sys

import pytest

from support.conformance import SUCCESS, missing_tools_reason, repo_root, run_client_scenario

pytestmark = pytest.mark.conformance

CHECKS = {
    "sep-2640-client-no-prefetch": "sep-2640-host-no-prefetch",
    "sep-2640-client-verify-digest": "sep-2640-host-verify-digest",
    "sep-2640-client-verify-size": "sep-2640-host-size-mismatch-failure",
    "sep-2640-client-verify-frontmatter": "sep-2640-host-frontmatter-comparison",
}
VERSIONS = [None, "2026-07-28"]


@pytest.mark.parametrize("version", VERSIONS, ids=["default", "2026-07-28"])
@pytest.mark.parametrize("scenario", list(CHECKS))
def test_skillhost_client(scenario: str, version: str | None) -> None:
    reason = missing_tools_reason()
    if reason:
        pytest.skip(reason)
    command = [sys.executable, str(repo_root() / "tests" / "servers" / "host_client.py")]
    run = run_client_scenario(command, scenario, spec_version=version, force=version is not None)
    assert run.status_of(CHECKS[scenario]) == SUCCESS, run.summary()
    assert not run.failures(), run.summary()
    assert not run.warnings(), run.summary()
    if scenario != "sep-2640-client-no-prefetch":
        # The client really loaded SKILL.md and stopped there: the refusal names the precise check.
        assert "refused:" in (run.client_stderr or ""), run.summary()
