"""Read a checkpoint file with LangGraph's own ``SqliteSaver``, as a LangGraph user would.

Run as ``python -m tests.storage.stock_reader DB OUT [--noema-serde | --default-serde]`` with
``LANGGRAPH_STRICT_MSGPACK=true`` (LangGraph reads it at import): it lists every checkpoint,
loads each with ``get_tuple``, and pickles each thread's ``get_state_history`` through a
compiled noema graph to OUT. The serializer is LangGraph's own with noema's classes
allow-listed, or noema's (``--noema-serde``, how a compact file is read), or LangGraph's
default (``--default-serde``: the allow-list the compiled graph derives from its schema).
"""

from __future__ import annotations

import os
import pickle
import sqlite3
import sys
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from noema_graph.graphs import build_agent_graph
from noema_graph.persistence import allowed_types, serializer
from tests.helpers import cfg
from tests.scripted import ScriptedChatModel


def history_of(graph: Any, thread: str) -> list[tuple[str, dict[str, Any], tuple[str, ...]]]:
    """Return ``thread``'s states, newest first: checkpoint id, values, next nodes."""
    config: Any = {"configurable": {"thread_id": thread}}
    return [
        (s.config["configurable"]["checkpoint_id"], s.values, s.next)
        for s in graph.get_state_history(config)
    ]


def read(db: Path, how: str = "") -> dict[str, Any]:
    """Return every thread's history of ``db`` read through a stock ``SqliteSaver``.

    ``how``: ``"--noema-serde"``, ``"--default-serde"``, else LangGraph's with the allow-list.
    """
    serde = {
        "--noema-serde": serializer(),
        "--default-serde": JsonPlusSerializer(),
    }.get(how, JsonPlusSerializer(allowed_msgpack_modules=allowed_types()))
    conn = sqlite3.connect(db, check_same_thread=False)
    try:
        saver = SqliteSaver(conn, serde=serde)
        listed = list(saver.list(None))
        assert all(saver.get_tuple(item.config) is not None for item in listed)
        graph = build_agent_graph(
            cfg(), model=ScriptedChatModel(script=[]), tools=[], checkpointer=saver
        )
        threads = sorted({item.config["configurable"]["thread_id"] for item in listed})
        return {thread: history_of(graph, thread) for thread in threads}
    finally:
        conn.close()


def main() -> None:
    """Read ``argv[1]``, pickle the histories to ``argv[2]``."""
    assert os.environ.get("LANGGRAPH_STRICT_MSGPACK") == "true", "LangGraph reads it at import"
    found = read(Path(sys.argv[1]), sys.argv[3] if len(sys.argv) > 3 else "")
    Path(sys.argv[2]).write_bytes(pickle.dumps(found))


if __name__ == "__main__":
    main()
