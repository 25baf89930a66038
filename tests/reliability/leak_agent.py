"""An agent process for the secret-leak attacks: it holds a secret in its initial environment.

``python -m tests.reliability.leak_agent WORKDIR CALLS_JSON`` runs each ``[tool, args]`` call
with the built-in bash and python_executor tools and prints the observations as JSON. The
secret must be in this process's *initial* environment (``/proc/<pid>/environ`` shows only
that), which a test cannot arrange for its own pytest process.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from noema_graph.config import AgentConfig
from noema_graph.tools import toolkits_for


def main() -> None:
    workdir, calls = Path(sys.argv[1]), json.loads(sys.argv[2])
    config = AgentConfig(
        working_directory=workdir,
        enabled_toolkits=("bash", "python_executor"),
        tool_timeout_s=20,
    )
    tools = {tool.name: tool for tool in toolkits_for(config)}
    results = []
    for index, (name, args) in enumerate(calls):
        call = {"type": "tool_call", "id": f"c{index}", "name": name, "args": args}
        results.append(json.loads(tools[name].invoke(call).content))
    print(json.dumps({"pid": os.getpid(), "results": results}))


if __name__ == "__main__":
    main()
