"""An MCP server (FastMCP, stdio) with one read-only tool and one tool with effects.

``get_total`` is annotated ``readOnlyHint``; ``add`` (numbers, not integers) adds to the
running total and is annotated ``destructiveHint``.
"""

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

server = FastMCP("annotated", log_level="WARNING")
TOTAL = [0.0]


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def get_total() -> str:
    """Return the running total."""
    return repr(TOTAL[0])


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def add(amount: float, times: int = 1) -> str:
    """Add amount to the running total, times times; return the value it received."""
    TOTAL[0] += amount * times
    return f"{type(amount).__name__} {amount!r}"


if __name__ == "__main__":
    server.run("stdio")
