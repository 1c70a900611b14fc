"""A real MCP session with ``plangraph mcp``: the SDK's own client spawns the installed command
over stdio in a repository, and each tool's answer comes back as (is_error, JSON, text)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli_helpers import PLANGRAPH
from mcp import Client, StdioServerParameters


@dataclass
class Answer:
    """What one tool call gave back."""

    is_error: bool
    data: Any
    text: str


@asynccontextmanager
async def session(root: Path, *args: str) -> AsyncIterator[Client]:
    """A client connected to ``plangraph mcp ARGS`` started in *root*."""
    params = StdioServerParameters(
        command=str(PLANGRAPH),
        args=["mcp", *args],
        cwd=root,
        # the per-user cache outside the repository: under pytester, HOME is the repository
        env={"PLANGRAPH_ACTOR": "tester", "XDG_CACHE_HOME": str(root.parent / "user-cache")},
    )
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> Answer:
    """Call *tool*; its text content (one block) and structured content."""
    result = await client.call_tool(tool, arguments)
    [block] = result.content
    assert block.type == "text"
    return Answer(result.is_error, result.structured_content, block.text)


async def read(client: Client, uri: str) -> str:
    """The text of the resource at *uri*."""
    result = await client.read_resource(uri)
    [content] = result.contents
    text = getattr(content, "text", None)
    assert isinstance(text, str)
    return text


def as_json(text: str) -> Any:
    """*text* parsed as JSON."""
    return json.loads(text)
