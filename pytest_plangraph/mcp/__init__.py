"""The MCP server (``plangraph mcp``): the agents' surface of the gate, over stdio.

:mod:`.answers` answers each tool and resource from :class:`~pytest_plangraph.api.PlanGraph`
with the JSON of the matching ``plangraph … --format json`` command, and needs no SDK;
:mod:`.server` registers them with the official ``mcp`` SDK (the optional extra
``pytest-plangraph[mcp]``), imported only when the server starts. No tool records evidence or
approvals: an agent cannot vouch for its own work (docs/trust.md).
"""
