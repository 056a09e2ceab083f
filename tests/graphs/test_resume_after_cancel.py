"""A run cancelled in the middle of a step resumes by running that step again in full."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from graphs.checkpoint import ERROR, RerunsFailedTasks, state_serde
from graphs.context import RunContext
from graphs.refinement import build_refinement_graph, recursion_limit
from tests.helpers.problems import ORCHESTRA


class Saver(RerunsFailedTasks, InMemorySaver):
    pass


async def _cancelled_in_evaluate(saver: InMemorySaver) -> tuple[Any, RunnableConfig]:
    """A thread whose `evaluate` step was cancelled between its update and its branch's Sends:
    what LangGraph's runner stores then (the update it had written, and the CancelledError)."""
    graph = build_refinement_graph(checkpointer=saver)
    config: RunnableConfig = {"configurable": {"thread_id": "t"}, "recursion_limit": recursion_limit(3)}
    start = {"original": ORCHESTRA, "current": ORCHESTRA, "previous": None, "round": 0}
    await graph.aupdate_state(config, start, as_node="__start__")
    snapshot = await graph.aget_state(config)
    assert snapshot.next == ("evaluate",)
    partial = [("round", 1), (ERROR, asyncio.CancelledError())]
    await saver.aput_writes(snapshot.config, partial, snapshot.tasks[0].id)
    (task,) = (await graph.aget_state(config)).tasks
    assert task.error == "CancelledError()"  # type: ignore[comparison-overlap]  # LangGraph reads ERROR as the task's error
    return graph, config


async def test_a_step_cancelled_midway_runs_again_and_the_run_is_judged(
    rubric_context: Callable[..., RunContext],
) -> None:
    graph, config = await _cancelled_in_evaluate(Saver(serde=state_serde()))
    state = await graph.ainvoke(None, config, context=rubric_context())
    assert state["rounds"] and state["rounds"][0].round == 1 and state["decision"]


async def test_without_the_mixin_langgraph_counts_the_cancelled_step_as_done(
    rubric_context: Callable[..., RunContext],
) -> None:
    """Why the mixin exists (langgraph 1.2.22): if this starts failing, LangGraph reruns failed
    tasks itself and `RerunsFailedTasks` can go."""
    graph, config = await _cancelled_in_evaluate(InMemorySaver(serde=state_serde()))
    state = await graph.ainvoke(None, config, context=rubric_context())
    assert state["round"] == 1 and not state.get("rounds")
