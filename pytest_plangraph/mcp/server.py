"""The stdio MCP server on the official ``mcp`` SDK (``MCPServer``): registers the tools and
resources of :mod:`.answers` and runs until the client closes the connection.

A tool's result carries the command's JSON twice, as MCP asks: as text (what ``--format
json`` prints, byte for byte) and as structured content. A
:class:`~pytest_plangraph.errors.PlangraphError` becomes a tool error whose text is the
command's one-line message (``plangraph: error: …``) and whose structured content is the
command's JSON error (``{"format": 1, "error": …}``, with ``reason`` for a conflict); the
server goes on. The SDK runs each tool on a worker thread: a lock makes one call at a time,
since each call opens the repository and the plan file may be patched by the last one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from .._version import __version__
from ..canonical import encodes_as_utf8
from ..errors import ConflictError, PlangraphError
from ..plan.model import FORMAT_VERSION
from . import answers
from .answers import ServedRepository

__all__ = ["build_server", "serve"]

_T = TypeVar("_T")

INSTRUCTIONS = (
    "pytest-plangraph decides from evidence which steps of a plan are done. Call `next` for "
    "the nodes ready to work on and what to run for each, `explain` for why a node is not "
    "completed, `status` for the state table. Evidence comes only from real runs (CI, "
    "`pytest --plangraph`) and approvals from people: no tool records either. When the work "
    "is done and evidence recorded, `claim` the node; the gate answers. Change the plan only "
    "with `propose_patch`: a node may be re-planned a few rounds (two by default), then a "
    "person decides."
)

_READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)
_WRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)


def _result(data: dict[str, Any]) -> CallToolResult:
    data = _writable(data)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _error(exc: PlangraphError) -> CallToolResult:
    message = _writable(str(exc))
    data: dict[str, Any] = {"format": FORMAT_VERSION, "error": message}
    if isinstance(exc, ConflictError):
        data["reason"] = exc.reason
    text = f"plangraph: error: {message}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=data, is_error=True
    )


class _Server(MCPServer[Any]):
    """``MCPServer`` whose argument errors read as the commands' do: one line, naming the
    argument and what is wrong with it (the SDK's own text spans lines and links)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Call tool *name*; arguments that fail its schema raise one line."""
        if (where := _undecodable(arguments)) is not None:
            raise ToolError(
                f"plangraph: error: {name}: argument {where} is not valid UTF-8 text (it holds a "
                "lone surrogate, such as a JSON \\ud800 escape); pass names, ids and patches "
                "as UTF-8"
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            raise ToolError(f"plangraph: error: {name}: {_problems(exc.__cause__)}") from None


def _undecodable(value: Any, where: str = "") -> str | None:
    """Where in *value* (arguments as JSON gave them) a text is not UTF-8, or None: such text
    could not even be written back in an answer, so it is refused before any call."""
    if isinstance(value, str):
        return None if encodes_as_utf8(value) else where or "value"
    if not isinstance(value, dict | list):
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if not encodes_as_utf8(str(key)):
            return f"{where}.<key>" if where else "<key>"
        found = _undecodable(item, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def _writable(value: Any) -> Any:
    """*value* with every text that UTF-8 cannot carry (a file name of undecodable bytes, kept
    by the system as lone surrogates) shown with backslash escapes instead: an answer the
    transport could not write would never reach the client, which would wait for it forever."""
    if isinstance(value, str):
        return value if encodes_as_utf8(value) else _shown(value)
    if isinstance(value, dict):
        return {_writable(k): _writable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_writable(v) for v in value]
    return value


def _shown(text: str) -> str:
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "backslashreplace")


def _problems(error: ValidationError) -> str:
    said = []
    for problem in error.errors():
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        given = type(problem["input"]).__name__ if problem["type"] != "missing" else ""
        said.append(f"argument {where}: {problem['msg']}" + (f" (got {given})" if given else ""))
    return "; ".join(dict.fromkeys(said))


def build_server(repo: ServedRepository) -> MCPServer[Any]:
    """The server answering for *repo*: six tools and two resources."""
    server: MCPServer[Any] = _Server(
        "plangraph", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    lock = threading.Lock()

    def call(answer: Callable[[], dict[str, Any]]) -> CallToolResult:
        with lock:
            try:
                return _result(answer())
            except PlangraphError as exc:
                return _error(exc)

    @server.tool(annotations=_READ_ONLY)
    def status() -> CallToolResult:
        """The state table: every node's derived status, reasons and criteria (the JSON of
        `plangraph status --format json`)."""
        return call(lambda: answers.status(repo))

    @server.tool(annotations=_READ_ONLY)
    def explain(node: str) -> CallToolResult:
        """Why NODE is not completed, in plain words, and what to run to fix it (the JSON of
        `plangraph explain NODE --format json`)."""
        return call(lambda: answers.explain(repo, node))

    @server.tool(name="next", annotations=_READ_ONLY)
    def next_nodes() -> CallToolResult:
        """The nodes ready to work on (strong prerequisites completed; not completed,
        cancelled or blocked), in topological order, each with its status and the criteria
        and commands still missing; `plan.version` is the version to pass as
        expected_plan_version (the JSON of `plangraph next --format json`)."""
        return call(lambda: answers.next_nodes(repo))

    @server.tool(annotations=_READ_ONLY)
    def impact(since: str | None = None) -> CallToolResult:
        """What changed and which evidence it invalidates: against the store's evidence, or
        with `since` (a git revision such as origin/main) the diff from it (the JSON of
        `plangraph impact [--since REV] --format json`; records nothing)."""
        return call(lambda: answers.impact(repo, since))

    @server.tool(annotations=_WRITES)
    def claim(
        node: str,
        by: str,
        idempotency_key: str | None = None,
        expected_plan_version: int | None = None,
    ) -> CallToolResult:
        """Claim NODE is done, as BY; the gate answers from the recorded evidence (verdict
        PASSED or FAILED with reasons). A refused claim counts against the node's retry
        budget. The same idempotency_key twice records one claim; expected_plan_version
        refuses the claim (PLAN_VERSION_CONFLICT) when the plan changed (the JSON of
        `plangraph claim NODE --by BY --format json`)."""
        return call(lambda: answers.claim(repo, node, by, idempotency_key, expected_plan_version))

    @server.tool(annotations=_WRITES)
    def propose_patch(
        patch: str | dict[str, Any], by: str, expected_plan_version: int
    ) -> CallToolResult:
        """Re-plan with a patch (docs/plan-format.md, 'Patches'): the text of a patch file
        (YAML or JSON) or its JSON object. Applied only when the patched plan lints clean and
        no node it touches has spent its replan rounds (REPLAN_BUDGET_EXHAUSTED: a person
        decides); refused with PLAN_VERSION_CONFLICT unless the plan is still version
        expected_plan_version (the JSON of `plangraph patch FILE --format json`)."""
        return call(lambda: answers.propose_patch(repo, patch, by, expected_plan_version))

    @server.resource("plangraph://plan", name="plan", mime_type="application/yaml")
    def plan() -> str:
        """The plan file as it is now."""
        return _resource(lambda: answers.plan_text(repo), lock)

    @server.resource("plangraph://status", name="status", mime_type="application/json")
    def state_table() -> str:
        """The state table (the JSON of `plangraph status --format json`)."""
        data = _writable(_resource(lambda: answers.status(repo), lock))
        return json.dumps(data, indent=2, ensure_ascii=False)

    return server


def _resource(read: Callable[[], _T], lock: threading.Lock) -> _T:
    with lock:
        try:
            return read()
        except PlangraphError as exc:
            raise ResourceError(f"plangraph: error: {_writable(str(exc))}") from exc


def serve(repo: ServedRepository) -> None:
    """Answer for *repo* over stdin and stdout until the client closes the connection."""
    build_server(repo).run("stdio")
