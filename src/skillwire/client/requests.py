"""Request models for the extension's methods, so `ClientSession.send_request` can send them.

Results are taken as plain JSON objects (`RAW_RESULT`) and validated by `skillwire.core.entry`, which
is stricter than a pydantic model would be and reports which entry is broken instead of failing the
whole page.
"""

from __future__ import annotations

from typing import Any

from mcp.client import Client
from mcp_types import PaginatedRequest, PaginatedRequestParams, Request
from pydantic import BaseModel, ConfigDict

from skillwire.core.params import GetSkillParams, ReadDirectoryParams
from skillwire.core.protocol import (
    METHOD_GET,
    METHOD_LIST,
    METHOD_READ_DIRECTORY,
    GetMethod,
    ListMethod,
    ReadDirectoryMethod,
)


class ListSkillsRequest(PaginatedRequest[ListMethod]):
    method: ListMethod = METHOD_LIST


class GetSkillRequest(Request[GetSkillParams, GetMethod]):
    method: GetMethod = METHOD_GET


class ReadDirectoryRequest(Request[ReadDirectoryParams, ReadDirectoryMethod]):
    method: ReadDirectoryMethod = METHOD_READ_DIRECTORY


class RawResult(BaseModel):
    """Any JSON object: the session needs a model, we need every field as sent."""

    model_config = ConfigDict(extra="allow")

    def fields(self) -> dict[str, Any]:
        return dict(self.__pydantic_extra__ or {})


RAW_RESULT = RawResult


def list_skills_request(cursor: str | None = None) -> ListSkillsRequest:
    return ListSkillsRequest(params=PaginatedRequestParams(cursor=cursor))


def get_skill_request(uri: str) -> GetSkillRequest:
    return GetSkillRequest(params=GetSkillParams(uri=uri))


def read_directory_request(uri: str, cursor: str | None = None) -> ReadDirectoryRequest:
    return ReadDirectoryRequest(params=ReadDirectoryParams(uri=uri, cursor=cursor))


async def send_raw(client: Client, request: Request[Any, Any]) -> dict[str, Any]:
    """Send one request and return the result object as sent (for tests, benchmarks, tools)."""
    return (await client.session.send_request(request, RawResult)).fields()
