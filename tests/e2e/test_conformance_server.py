"""The official conformance suite against `skillwire serve` over Streamable HTTP.

The example skills are served with a page size of 2 so `skills/list` really paginates. Each scenario
must finish with zero FAILURE and zero WARNING, at the default protocol version (2026-07-28) and on
the legacy `initialize` wire (2025-11-25, which needs `--force` for extension scenarios).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.conformance import SUCCESS, missing_tools_reason, run_server_scenario
from support.servers import CORPUS, EXAMPLES, RunningServer, serve_http

pytestmark = pytest.mark.conformance

SKILLS_SCENARIOS = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"]
ALL_SCENARIOS = [*SKILLS_SCENARIOS, "sep-2164-resource-not-found", "dns-rebinding-protection"]


@pytest.fixture(scope="module")
def examples_server() -> Iterator[RunningServer]:
    reason = missing_tools_reason()
    if reason:
        pytest.skip(reason)
    with serve_http([str(EXAMPLES), "--page-size", "2", "--no-watch", "--no-digest-cache"]) as server:
        yield server


@pytest.mark.parametrize("scenario", ALL_SCENARIOS)
def test_examples_default_version(examples_server: RunningServer, scenario: str) -> None:
    run = run_server_scenario(examples_server.url, scenario)
    assert run.checks, run.summary()
    assert not run.failures(), run.summary()
    assert not run.warnings(), run.summary()
    assert run.exit_code == 0, run.summary()
    if scenario.startswith("sep-2640"):
        # A pass must have tested something: the core checks ran and succeeded.
        assert sum(1 for c in run.checks if c.status == SUCCESS) >= 6, run.summary()


@pytest.mark.parametrize("scenario", ALL_SCENARIOS)
def test_examples_legacy_initialize(examples_server: RunningServer, scenario: str) -> None:
    run = run_server_scenario(examples_server.url, scenario, spec_version="2025-11-25", force=True)
    assert not run.not_applicable, run.summary()
    assert run.checks, run.summary()
    assert not run.failures(), run.summary()
    assert not run.warnings(), run.summary()
    if scenario == "sep-2640-skills-enumeration":
        # Without the legacy-initialize fix every skills check is SKIPPED ("not declared").
        assert run.status_of("sep-2640-capability-empty-object") == SUCCESS, run.summary()
        assert run.status_of("sep-2640-entry-frontmatter-identical") == SUCCESS, run.summary()


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpora/awesome-copilot is not present")
def test_awesome_copilot_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    reason = missing_tools_reason()
    if reason:
        pytest.skip(reason)
    with serve_http([str(CORPUS), "--no-watch", "--no-digest-cache"], timeout=120) as server:
        skipped = [line for line in server.startup_log.splitlines() if line.startswith("  - ")]
        with capsys.disabled():
            print(f"\n{server.startup_log.splitlines()[0]}")
            print("\n".join(skipped))
        assert "serving" in server.startup_log
        for scenario in SKILLS_SCENARIOS:
            run = run_server_scenario(server.url, scenario)
            assert run.checks, run.summary()
            failures = run.failures()
            if scenario == "sep-2640-skills-directory":
                # The suite exercises the first listed skill. On this corpus that is acreadiness-assess (its
                # folder holds SKILL.md and one file: no subdirectory), since acquire-codebase-knowledge, which
                # sorts before it, is skipped for its list-valued metadata. So the subdirectory check is "Not
                # testable" here; it passes on the bundled examples (test_examples_default_version above).
                failures = [
                    c for c in failures if not (c.id == "sep-2640-directory-read-subdir-mimetype" and c.untestable)
                ]
            assert not failures, run.summary()
