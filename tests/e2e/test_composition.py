"""Composition: `SkillsExtension` attached to a server that already has tools, prompts and resources.

The host is `tests/servers/everything_server.py`: an `MCPServer` carrying the conformance suite's
own fixtures for the base-protocol scenarios, with the skills extension attached on top. It runs as
a real subprocess over Streamable HTTP, and the official suite must pass both the base scenarios
(attaching skills breaks nothing the host already did) and the skills scenarios (the host's tools,
prompts and resources break nothing in skills). Everything runs at the suite's default spec
version, 2026-07-28. A direct client check then shows `resources/list` merging both halves.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import BlobResourceContents, TextResourceContents

from servers import free_port, running_http_server
from servers.everything_server import HOST_RESOURCE_URIS, STATIC_PNG, STATIC_TEXT
from support.conformance import (
    FAILURE,
    INFO,
    SUCCESS,
    WARNING,
    ConformanceRun,
    missing_tools_reason,
    run_server_scenario,
)

FIXTURE = Path(__file__).resolve().parents[1] / "servers" / "everything_server.py"
EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "skillwire" / "examples" / "skills"

# Scenario -> check names (the suite's `name`, which is more specific than `id` in
# http-header-validation) that must be among the SUCCESSes, so a scenario that silently
# exercised nothing cannot pass.
BASE_SCENARIOS: dict[str, frozenset[str]] = {
    "server-stateless": frozenset(
        {
            "ServerImplementsDiscover",
            "ServerIdentifiesInResultMeta",
            "ServerDeclaresPromptsInDiscover",
            "DiscoverCapabilitiesMatchHandlers",
            "ServerRejectsUndeclaredCapability",  # test_missing_capability -> -32021 + sampling
            "MissingCapabilityHttp400",
            "HttpServerNoIndependentRequestsOnStream",  # test_streaming_elicitation
            "ServerNoLogWithoutLogLevel",  # test_logging_tool
            "ServerSendsSubscriptionAck",
            "ServerTagsSubscriptionId",
            "ServerHonorsNotificationFilter",
            "ServerSendsPromptsListChangedOnSubscription",  # test_trigger_prompt_change
            "ServerSendsToolsListChangedOnSubscription",  # test_trigger_tool_change
            "HttpServerMethodNotFound404",
        }
    ),
    "caching": frozenset(
        {
            "ToolsListCachingHints",
            "PromptsListCachingHints",
            "ResourcesListCachingHints",
            "ResourcesTemplatesListCachingHints",
            "ResourcesReadCachingHints",
            "TtlNonNegative",
            "CacheScopeValid",
        }
    ),
    "resources-list": frozenset({"ResourcesList"}),
    "resources-read-text": frozenset({"ResourcesReadText"}),
    "resources-read-binary": frozenset({"ResourcesReadBinary"}),
    "http-header-validation": frozenset(
        {
            "ServerRejectsMismatchedMethodHeader",
            "ServerRejectsMissingMethodHeader",
            "ServerRejectsMismatchedNameHeader",
            "ServerAcceptsWhitespaceHeaderValue",
            "ServerRejectsMissingNameHeader",
            "ServerAcceptsLowercaseHeaderName",
            "ServerAcceptsUppercaseHeaderName",
            "ServerRejectsCaseMismatchValue",
        }
    ),
}

SKILLS_SCENARIOS: dict[str, frozenset[str]] = {
    "sep-2640-skills-enumeration": frozenset(
        {
            "sep-2640-capability-commits-to-methods",
            "sep-2640-skills-get-implemented",
            "sep-2640-skillmd-required",
            "sep-2640-entry-frontmatter-identical",
        }
    ),
    "sep-2640-skills-manifest": frozenset(
        {
            "sep-2640-final-segment-equals-name",
            "sep-2640-skillmd-metadata-name",
            "sep-2640-skillmd-metadata-description",
        }
    ),
    "sep-2640-skills-directory": frozenset(
        {"sep-2640-directory-read-method-registered", "sep-2640-directory-read-subdir-mimetype"}
    ),
}


@pytest.fixture(scope="module")
def everything_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("everything") / "server.log"
    argv = [sys.executable, str(FIXTURE), "--port", str(port)]
    with running_http_server(argv, port, log):
        yield f"http://127.0.0.1:{port}/mcp"


_MISSING_SUITE = missing_tools_reason()
# A skipif mark (not a fixture) so that, without the suite, the server is not even started.
needs_suite = pytest.mark.skipif(_MISSING_SUITE is not None, reason=_MISSING_SUITE or "")


def assert_clean(run: ConformanceRun, required: frozenset[str], *, by: str) -> None:
    """Nothing but SUCCESS (and INFO), the suite agreed, and every required check ran."""
    assert run.results_source == "checks.json", run.summary()
    assert not run.with_status(FAILURE, WARNING), run.summary()
    assert run.exit_code == 0, run.summary()
    # Not even SKIPPED: every check these fixtures exist for was exercised.
    assert all(check.status in (SUCCESS, INFO) for check in run.checks), run.summary()
    passed = {check.name if by == "name" else check.id for check in run.with_status(SUCCESS)}
    assert required <= passed, f"missing {sorted(required - passed)}\n{run.summary()}"
    # The suite validates every message against the 2026-07-28 schema, except in server-stateless,
    # whose probes are raw fetches it does not feed to that check.
    if run.scenario != "server-stateless":
        assert run.status_of("wire-schema-valid") == SUCCESS, run.summary()


@pytest.mark.conformance
@needs_suite
@pytest.mark.parametrize("scenario", sorted(BASE_SCENARIOS))
def test_base_scenario_passes_with_skills_attached(everything_url: str, scenario: str) -> None:
    run = run_server_scenario(everything_url, scenario, timeout=120)
    assert_clean(run, BASE_SCENARIOS[scenario], by="name")


@pytest.mark.conformance
@needs_suite
@pytest.mark.parametrize("scenario", sorted(SKILLS_SCENARIOS))
def test_skills_scenario_passes_on_composed_server(everything_url: str, scenario: str) -> None:
    run = run_server_scenario(everything_url, scenario, timeout=120)
    assert_clean(run, SKILLS_SCENARIOS[scenario], by="id")


@pytest.mark.anyio
async def test_resources_list_merges_host_and_skill_resources(everything_url: str) -> None:
    skill_mds = sorted(
        "skill://" + path.parent.relative_to(EXAMPLES).as_posix() + "/SKILL.md" for path in EXAMPLES.rglob("SKILL.md")
    )
    async with Client(everything_url, cache=None) as client:
        assert client.protocol_version == "2026-07-28"
        capabilities = client.server_capabilities
        assert capabilities.extensions is not None
        assert capabilities.extensions["io.modelcontextprotocol/skills"] == {"directoryRead": True}
        assert capabilities.tools is not None
        assert capabilities.prompts is not None

        listed: list[str] = []
        cursor: str | None = None
        for _ in range(50):
            page = await client.list_resources(cursor=cursor)
            listed += [str(resource.uri) for resource in page.resources]
            cursor = page.next_cursor
            if cursor is None:
                break
        assert cursor is None, "resources/list did not finish within 50 pages"

        # The host's own resources come first, then every SKILL.md; nothing twice.
        assert listed[: len(HOST_RESOURCE_URIS)] == list(HOST_RESOURCE_URIS)
        assert sorted(listed[len(HOST_RESOURCE_URIS) :]) == skill_mds
        assert len(set(listed)) == len(listed)

        # Reads fall through to the host for its URIs and are answered by skills for skill://.
        text = (await client.read_resource("test://static-text")).contents
        assert len(text) == 1
        assert isinstance(text[0], TextResourceContents)
        assert text[0].text == STATIC_TEXT
        binary = (await client.read_resource("test://static-binary")).contents
        assert len(binary) == 1
        assert isinstance(binary[0], BlobResourceContents)
        assert base64.b64decode(binary[0].blob) == STATIC_PNG
        assert binary[0].mime_type == "image/png"
        templated = (await client.read_resource("test://template/123/data")).contents
        assert isinstance(templated[0], TextResourceContents)
        assert "123" in templated[0].text
        skill_md = (await client.read_resource("skill://pdf-processing/SKILL.md")).contents
        assert len(skill_md) == 1
        assert isinstance(skill_md[0], TextResourceContents)
        assert skill_md[0].mime_type == "text/markdown"
        assert skill_md[0].text.encode() == (EXAMPLES / "pdf-processing" / "SKILL.md").read_bytes()

        # The host's tools, prompts and templates are all still there.
        tools = [tool.name for tool in (await client.list_tools()).tools]
        assert tools[0] == "test_simple_text"
        assert "test_missing_capability" in tools
        prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
        assert "test_simple_prompt" in prompts
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["test://template/{id}/data"]
