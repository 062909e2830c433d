"""`tool_definitions` against the SDKs that take them (issue 20 item 4): the `openai` package's Chat
Completions and Responses tool types with `strict: true` (OpenAI's strict rule: every property required,
`additionalProperties: false`, optional values nullable), and the `anthropic` package's `ToolParam`.
The types are the packages' own TypedDicts, validated with pydantic; skipped when the packages are absent."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter

from skillwire.host.tool_schemas import tool_definitions

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")


def _strict_valid(schema: dict[str, Any]) -> None:
    """OpenAI's structured-outputs rule for a strict function, applied to every object in the schema."""
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == list(schema["properties"])


def test_openai_chat_completions_shape_is_strict_and_typed() -> None:
    from openai.types.chat import ChatCompletionFunctionToolParam

    adapter = TypeAdapter(ChatCompletionFunctionToolParam)
    for tool in tool_definitions("openai"):
        adapter.validate_python(tool, strict=True)
        assert tool["function"]["strict"] is True
        _strict_valid(tool["function"]["parameters"])


def test_openai_responses_shape_is_flat_strict_and_typed() -> None:
    from openai.types.responses import FunctionToolParam

    adapter = TypeAdapter(FunctionToolParam)
    for tool in tool_definitions("openai-responses"):
        adapter.validate_python(tool, strict=True)
        assert tool["strict"] is True
        assert "function" not in tool
        _strict_valid(tool["parameters"])


def test_strict_list_skills_takes_null_for_an_omitted_argument() -> None:
    (list_skills, *_) = tool_definitions("openai-responses")
    validator = Draft202012Validator(list_skills["parameters"])
    validator.validate({"query": None, "cursor": None})
    validator.validate({"query": "pdf", "cursor": None})
    assert list(validator.iter_errors({"query": "pdf"}))  # strict: every property is sent


def test_anthropic_shape_is_typed() -> None:
    from anthropic.types import ToolParam

    adapter = TypeAdapter(ToolParam)
    for tool in tool_definitions("anthropic"):
        adapter.validate_python(tool, strict=True)
