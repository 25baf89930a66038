"""Exit codes scripts can trust: 0 success, 1 no success, 3 paused; resume of a finished thread."""

from __future__ import annotations

import json
from typing import Any

from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply


def _hello() -> ScriptedChatModel:
    return ScriptedChatModel(script=[plan_reply("Answer"), text("hello there")])


def _out_of_iterations() -> ScriptedChatModel:
    # one iteration allowed, and it is spent on a call to a tool that does not exist
    return ScriptedChatModel(script=[plan_reply("one", "two"), tools_reply(call("nope", {}))])


def test_success_is_0_and_quiet_prints_only_the_answer(cli: Any) -> None:
    invoke, models = cli
    models.append(_hello())
    done = invoke("run", "say hello", "--quiet")
    assert done.exit_code == 0, done.output
    assert done.stdout == "hello there\n" and done.stderr == ""


def test_json_prints_only_the_contract_on_stdout(cli: Any) -> None:
    invoke, models = cli
    models.append(_hello())
    done = invoke("run", "say hello", "--json")
    assert done.exit_code == 0, done.output
    output = json.loads(done.stdout)
    assert output["success"] is True and output["result"] == "hello there"
    assert "plan" not in done.stderr  # no progress lines either


def test_a_run_that_ends_without_success_exits_1(cli: Any) -> None:
    invoke, models = cli
    models.append(_out_of_iterations())
    done = invoke("run", "do two things", "--max-iterations", "1", "--thread", "lim")
    assert done.exit_code == 1, done.output
    assert "stopped: max_iterations" in done.stderr
    assert "plan the goal\n  1. one\n  2. two" in done.stderr  # the plain view


def test_resume_of_a_finished_thread_reports_it_and_exits_with_its_code(cli: Any) -> None:
    invoke, models = cli
    models.extend([_hello(), _out_of_iterations()])
    assert invoke("run", "say hello", "--thread", "ok").exit_code == 0
    assert invoke("run", "two", "--max-iterations", "1", "--thread", "lim").exit_code == 1
    # no model is queued: a finished thread is reported, not run again
    done = invoke("resume", "ok")
    assert done.exit_code == 0, done.output
    assert "thread ok already finished successfully; nothing to resume" in done.stderr
    assert done.stdout == "hello there\n"
    failed = invoke("resume", "lim", "--json")
    assert failed.exit_code == 1, failed.output
    assert "already finished with max_iterations" in failed.stderr
    assert json.loads(failed.stdout)["error"]["code"] == "max_iterations"


def test_a_pause_without_an_answer_exits_3_and_resume_continues(cli: Any) -> None:
    invoke, models = cli
    ask = tools_reply(call("ask_user", {"question": "Which language?"}, "q1"))
    models.append(ScriptedChatModel(script=[plan_reply("Ask"), ask]))
    paused = invoke("run", "Teach me words", "--clarify", "--thread", "p1")
    assert paused.exit_code == 3, paused.output
    assert "continue with: noema-graph resume p1" in paused.stderr
    models.append(ScriptedChatModel(script=[text("Welsh it is.")]))
    done = invoke("resume", "p1", input="Welsh\n")
    assert done.exit_code == 0, done.output
    assert "Welsh it is." in done.stdout
