"""An MCP server that initialises correctly, then answers tool calls with garbage.

The tool 'mangled' gets a JSON-RPC response whose result is not a CallToolResult;
the tool 'noise' gets a line of non-JSON bytes and no response at all.
"""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


TOOLS = [
    {"name": name, "description": name, "inputSchema": {"type": "object", "properties": {}}}
    for name in ("mangled", "noise")
]

for line in sys.stdin:
    request = json.loads(line)
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        continue
    if method == "initialize":
        send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {
                    "protocolVersion": request["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "garbage", "version": "0"},
                },
            }
        )
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "tools/call" and request["params"]["name"] == "mangled":
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": "not-a-list", "isError": 7}})
    elif method == "tools/call":
        sys.stdout.write("\x00\x01 this is not json {{{\n")
        sys.stdout.flush()
