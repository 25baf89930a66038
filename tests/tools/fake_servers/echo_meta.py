"""An MCP server (FastMCP, stdio) whose one tool answers with its own request's ``_meta``.

The tool ``echo_meta`` returns the ``_meta`` of the ``tools/call`` request that reached it,
as JSON (``null`` when the request carried none).
"""

import json

from mcp.server.fastmcp import Context, FastMCP

server = FastMCP("echo-meta", log_level="WARNING")


@server.tool()
def echo_meta(ctx: Context) -> str:
    """Return the _meta of this tools/call request as JSON."""
    meta = ctx.request_context.meta
    return json.dumps(None if meta is None else meta.model_dump(exclude_none=True))


if __name__ == "__main__":
    server.run("stdio")
