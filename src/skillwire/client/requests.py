"""Request models for the extension's methods, so `ClientSession.send_request` can send them.

Results are taken as plain JSON objects (`RAW_RESULT`) and validated by `skillwire.core.entry`, which
is stricter than a pydantic model would be and reports which entry is broken instead of failing the
whole page.
"""

from __future__ import annotations

from typing import Any, Literal

from mcp_types import PaginatedRequest, PaginatedRequestParams, Request, RequestParams
from pydantic import TypeAdapter


class GetSkillParams(RequestParams):
    uri: str


class ReadDirectoryParams(PaginatedRequestParams):
    uri: str


class ListSkillsRequest(PaginatedRequest[Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"


class GetSkillRequest(Request[GetSkillParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"


class ReadDirectoryRequest(Request[ReadDirectoryParams, Literal["resources/directory/read"]]):
    method: Literal["resources/directory/read"] = "resources/directory/read"


RAW_RESULT: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


def list_skills_request(cursor: str | None = None) -> ListSkillsRequest:
    return ListSkillsRequest(params=PaginatedRequestParams(cursor=cursor))


def get_skill_request(uri: str) -> GetSkillRequest:
    return GetSkillRequest(params=GetSkillParams(uri=uri))


def read_directory_request(uri: str, cursor: str | None = None) -> ReadDirectoryRequest:
    return ReadDirectoryRequest(params=ReadDirectoryParams(uri=uri, cursor=cursor))
