"""Driving the refinement graph for one run: from its start or its last checkpoint to its end."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from agents.schemas import Problem
from graphs.context import RunContext
from graphs.events import RunEvent, RunFinished
from graphs.result import EventSink, RunResult, build_result
from graphs.state import RefinementState

if TYPE_CHECKING:
    # LangGraph (and, through langchain-core, langsmith) loads with the first graph built or run,
    # not with the import of the executor: `thinkloop --help` and a server's settings need neither.
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import Durability, StreamMode


class Driver:
    """Runs one compiled refinement graph, a checkpoint thread per run (none without a checkpointer)."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph

    @property
    def checkpoints(self) -> bool:
        """Whether the graph keeps checkpoints (a temporary store's keeps none)."""
        return self.graph.checkpointer is not None

    def config(self, run_id: str, max_rounds: int = 0) -> RunnableConfig:
        """The run's graph configuration: its checkpoint thread, and the steps its rounds allow."""
        from graphs.refinement import recursion_limit

        return {"configurable": {"thread_id": run_id}, "recursion_limit": recursion_limit(max_rounds)}

    def durability(self) -> dict[str, Durability]:
        """Each step's checkpoint is stored before the next step's model calls start ("sync"): a
        run taken over repeats only the step it was in, and none waits at its end for a queue of
        checkpoint writes. LangGraph's default ("async") stores them in the background, where under
        load they fell whole runs behind the work. A graph without checkpoints takes no mode."""
        return {"durability": "sync"} if self.checkpoints else {}

    async def saved(self, run_id: str) -> dict[str, Any]:
        """The run's state at its last checkpoint (empty without one)."""
        if not self.checkpoints:
            return {}
        return dict((await self.graph.aget_state(self.config(run_id))).values)

    async def drive(
        self,
        run_id: str,
        problem: Problem,
        context: RunContext,
        resuming: bool,
        arm: str,
        step: Callable[[dict[str, Any]], None],
        event: Callable[[RunEvent], None],
        observe: EventSink | None = None,
    ) -> tuple[RunResult, RunFinished | None]:
        """The feedback loop (``arm`` "control": the zero-shot control arm, its one blind revision
        judged once), from its last checkpoint (``resuming``: the run was started before). Each
        step's update goes to ``step`` and each event to ``event`` (and to ``observe``), but the end
        event, which is returned: it is published after the run's final state is stored."""
        config = self.config(run_id, context.policy.max_rounds)
        # The start is stored before the graph runs, so a run never started has no checkpoint to read.
        checkpointed = resuming and bool((await self.graph.aget_state(config)).values)
        start: RefinementState | None = (
            None
            if checkpointed
            else {"arm": arm, "original": problem, "current": problem, "previous": None, "round": 0}
        )
        finished: RunFinished | None = None
        state: RefinementState | None = None
        modes: list[StreamMode] = ["custom", "updates", "values"]
        stream = self.graph.astream(start, config, context=context, stream_mode=modes, **self.durability())
        async for mode, chunk in stream:
            if mode == "values":
                state = cast(RefinementState, chunk)  # after each step; the last is the final state
            elif mode == "updates":
                step(chunk)
            else:
                if observe is not None:
                    observe(chunk)
                if isinstance(chunk, RunFinished):
                    finished = chunk
                else:
                    event(chunk)
        if self.checkpoints and (state is None or not state.get("rounds")):
            # Nothing was left to execute, or a resumed stream's last values were taken before a round
            # it had already judged: the checkpoint holds the run's whole state.
            state = (await self.graph.aget_state(config)).values
        assert state is not None, "a graph without checkpoints streams its state after every step"
        return build_result(state, context.policy), finished

    async def delete_checkpoints(self, run_ids: Iterable[str]) -> None:
        """Delete the checkpoints of ended runs (their graph states, which hold every version)."""
        if not self.checkpoints:
            return
        for run_id in run_ids:
            await self.graph.checkpointer.adelete_thread(run_id)
