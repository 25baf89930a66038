"""The built-in toolkits: file_edit, bash, python_executor, search, and toolkits_for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.tools import BaseTool

from noema_graph.config import AgentConfig
from noema_graph.tools import Document, SqliteSearchProvider, toolkits_for


def tools_by_name(tools: list[BaseTool]) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in tools}


def run(tool: BaseTool, **args: object) -> tuple[str, dict]:
    message = tool.invoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": args})
    return message.status, json.loads(message.content)


@pytest.fixture
def tools(workdir: Path) -> dict[str, BaseTool]:
    config = AgentConfig(working_directory=workdir, tool_timeout_s=10)
    return tools_by_name(toolkits_for(config))


def test_toolkits_for_builds_enabled_toolkits(workdir: Path) -> None:
    config = AgentConfig(working_directory=workdir, enabled_toolkits=("file_edit", "search"))
    names = [tool.name for tool in toolkits_for(config)]
    assert names == ["read_file", "write_file", "list_dir", "search_files", "search"]


def test_toolkits_for_defaults_to_cwd(monkeypatch: pytest.MonkeyPatch, workdir: Path) -> None:
    monkeypatch.chdir(workdir)
    tool = tools_by_name(toolkits_for(AgentConfig(enabled_toolkits=("file_edit",))))["read_file"]
    status, body = run(tool, path="notes.txt")
    assert status == "success"
    assert body["data"]["content"].startswith("hello")


def test_read_write_list_search(tools: dict[str, BaseTool], workdir: Path) -> None:
    status, body = run(tools["write_file"], path="sub/new.py", content="x = 1\n# TODO fix\n")
    assert status == "success"
    assert body["data"] == {"path": "sub/new.py", "bytes_written": 17}
    run(tools["write_file"], path="sub/new.py", content="y = 2\n", append=True)
    assert (workdir / "sub" / "new.py").read_text() == "x = 1\n# TODO fix\ny = 2\n"
    _, body = run(tools["read_file"], path="sub/new.py")
    assert body["data"]["content"].endswith("y = 2\n")
    _, body = run(tools["list_dir"], path=".")
    assert [e["name"] for e in body["data"]["entries"]] == ["notes.txt", "sub"]
    _, body = run(tools["search_files"], pattern=r"TODO|second", glob="*")
    assert {(m["path"], m["line"]) for m in body["data"]["matches"]} == {
        ("notes.txt", 2),
        ("sub/new.py", 2),
    }


def test_missing_file_and_bad_pattern_are_observations(tools: dict[str, BaseTool]) -> None:
    status, body = run(tools["read_file"], path="nope.txt")
    assert (status, body["error"]["type"]) == ("error", "not_found")
    status, body = run(tools["search_files"], pattern="(unclosed")
    assert (status, body["error"]["type"]) == ("error", "invalid_input")


def test_bash_runs_in_workdir_with_minimal_env(
    tools: dict[str, BaseTool], workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    status, body = run(tools["bash"], command='pwd; echo "key=${OPENAI_API_KEY:-none}"; exit 3')
    assert status == "success"
    assert body["data"]["exit_code"] == 3
    assert body["data"]["output"] == f"{workdir}\nkey=none\n"


def test_bash_timeout_kills_the_process_group(tools: dict[str, BaseTool], workdir: Path) -> None:
    status, body = run(
        tools["bash"], command="(sleep 30; touch late.txt) & sleep 30", timeout_s=0.5
    )
    assert (status, body["error"]["type"]) == ("error", "timeout")
    assert not (workdir / "late.txt").exists()


def test_python_executor_runs_code(tools: dict[str, BaseTool], workdir: Path) -> None:
    code = "import os\nprint(os.getcwd())\nopen('out.txt', 'w').write('ok')\n"
    status, body = run(tools["python_executor"], code=code)
    assert status == "success"
    assert body["data"]["output"].strip() == str(workdir)
    assert (workdir / "out.txt").read_text() == "ok"


def test_python_executor_reports_exceptions(tools: dict[str, BaseTool]) -> None:
    status, body = run(tools["python_executor"], code="raise ValueError('bad')")
    assert status == "success"
    assert body["data"]["exit_code"] == 1
    assert "ValueError: bad" in body["data"]["output"]


def test_python_executor_blocks_network(tools: dict[str, BaseTool]) -> None:
    code = "import socket\nsocket.create_connection(('127.0.0.1', 9))"
    _, body = run(tools["python_executor"], code=code)
    assert "network access is disabled" in body["data"]["output"]


def test_search_over_added_documents(workdir: Path) -> None:
    provider = SqliteSearchProvider()
    provider.add_documents(
        [
            Document(id="d1", text="LangGraph checkpoints survive crashes", source="a.md"),
            "SQLite FTS5 ranks results with BM25",
        ]
    )
    config = AgentConfig(working_directory=workdir, enabled_toolkits=("search",))
    tool = toolkits_for(config, search_provider=provider)[0]
    status, body = run(tool, query="crashes? checkpoints!")
    assert status == "success"
    hits = body["data"]["hits"]
    assert [hit["id"] for hit in hits] == ["d1"]
    assert "[checkpoints]" in hits[0]["snippet"]
    provider.add_documents([Document(id="d1", text="replaced")])
    assert provider.search("checkpoints") == []
    provider.close()


def test_default_search_index_lives_under_workdir(workdir: Path) -> None:
    config = AgentConfig(working_directory=workdir, enabled_toolkits=("search",))
    tool = toolkits_for(config)[0]
    status, body = run(tool, query="anything")
    assert (status, body["data"]["hits"]) == ("success", [])
    assert (workdir / ".noema" / "search.sqlite").exists()
