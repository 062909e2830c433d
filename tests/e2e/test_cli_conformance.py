"""The suite's SEP-2640 client scenarios with the command line as the client.

`skillwire ls` for `sep-2640-client-no-prefetch` (it must list and read nothing), and
`skillwire pull --to <temporary dir>` for the three `sep-2640-client-verify-*` scenarios, whose mock
server tampers with `skill://pdf-processing/SKILL.md` (same-length body, appended bytes, or a
frontmatter swap with honest digests): pull must read SKILL.md, refuse it, never read FORMS.md, and
write nothing of the skill. The suite appends the mock server's URL as the last argument. Run at the
suite's default protocol version (2025-11-25 handshake) and at 2026-07-28.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from support.conformance import SUCCESS, missing_tools_reason, run_client_scenario

pytestmark = pytest.mark.conformance

CLI = [sys.executable, "-m", "skillwire.cli.main"]
VERSIONS = [None, "2026-07-28"]
VERIFY = {
    "sep-2640-client-verify-digest": ("sep-2640-host-verify-digest", "digest mismatch"),
    "sep-2640-client-verify-size": ("sep-2640-host-size-mismatch-failure", "size mismatch"),
    "sep-2640-client-verify-frontmatter": ("sep-2640-host-frontmatter-comparison", "frontmatter differs"),
}


@pytest.fixture(autouse=True)
def _tools() -> None:
    reason = missing_tools_reason()
    if reason:
        pytest.skip(reason)


@pytest.mark.parametrize("version", VERSIONS, ids=["default", "2026-07-28"])
def test_ls_is_a_no_prefetch_client(version: str | None) -> None:
    run = run_client_scenario([*CLI, "ls"], "sep-2640-client-no-prefetch", spec_version=version, force=bool(version))
    assert run.status_of("sep-2640-host-no-prefetch") == SUCCESS, run.summary()
    assert not run.failures(), run.summary()
    assert not run.warnings(), run.summary()
    assert run.client_exit_code is None, run.summary()  # exit 0
    assert "skill://pdf-processing/SKILL.md" in (run.client_stdout or ""), run.summary()


@pytest.mark.parametrize("version", VERSIONS, ids=["default", "2026-07-28"])
@pytest.mark.parametrize("scenario", list(VERIFY))
def test_pull_verifies_before_writing(scenario: str, version: str | None, tmp_path: Path) -> None:
    check, mismatch = VERIFY[scenario]
    target = tmp_path / "pulled"
    run = run_client_scenario([*CLI, "pull", "--to", str(target)], scenario, spec_version=version, force=bool(version))
    assert run.status_of(check) == SUCCESS, run.summary()
    assert not run.failures(), run.summary()
    assert not run.warnings(), run.summary()
    stderr = run.client_stderr or ""
    assert "skillwire: failed skill://pdf-processing/SKILL.md" in stderr, run.summary()
    assert mismatch in stderr, run.summary()
    assert "nothing of this skill was written" in stderr, run.summary()
    # The tampered skill's files are not written; neither is a lock (nothing was pulled).
    written = sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) if target.exists() else []
    assert written == [], written
