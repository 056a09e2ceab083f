"""What the loop needs of a LangGraph checkpointer: our state types, allow-listed, and a failed
step that runs again in full when the run resumes."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

# The channel of a task's error in LangGraph's pending writes (private there since 1.0: its value is
# checked by tests/graphs/test_resume_after_cancel.py).
ERROR = "__error__"

# Every pydantic type that can appear inside RefinementState.
STATE_TYPES: list[tuple[str, str]] = (
    [
        ("agents.schemas", name)
        for name in (
            "Problem",
            "JudgeReply",
            "HolisticReply",
            "JudgeVerdict",  # the old names of the two above (#56), in checkpoints written before
            "HolisticVerdict",
            "FiveKeys",
            "Usage",  # in agents.llm.calls since #56: here for checkpoints written before the move
            "JudgeResult",
            "RevisionResult",
            "Solution",
            "SolverResult",
            "CallFailure",  # as Usage
        )
    ]
    + [
        ("agents.llm.calls", "Usage"),
        ("agents.llm.calls", "CallFailure"),
    ]
    + [
        ("graphs.state", "Round"),
        ("graphs.state", "RoundFigures"),
        ("graphs.state", "RoundRecord"),  # its old name, in checkpoints of runs in flight across the rename
    ]
)


def state_serde() -> JsonPlusSerializer:
    """A serializer that restores our state types and refuses unknown ones."""
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


def _without_partial_writes(saved: CheckpointTuple | None) -> CheckpointTuple | None:
    """Drop what a failed task wrote before it failed, keeping its error.

    LangGraph stores the writes a task had made when it was cancelled (a process stopping mid-run)
    beside an ERROR write, and on resume (1.2.22) gives those writes back to the task, which then
    counts as done. A node's writes come in parts (its update, then its branch's ``Send``s), so a
    task cancelled between them resumed as ``evaluate`` having set the round number and sent no
    judge: the graph ended with no round judged. A task with an error must run again from nothing.
    """
    if saved is None or not saved.pending_writes:
        return saved
    failed = {task for task, channel, _ in saved.pending_writes if channel == ERROR}
    if not failed:
        return saved
    kept = [w for w in saved.pending_writes if w[0] not in failed or w[1] == ERROR]
    return saved._replace(pending_writes=kept)


class RerunsFailedTasks:
    """Mixed into a checkpointer (before it): a resumed run executes every failed task again."""

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return _without_partial_writes(super().get_tuple(config))  # type: ignore[misc]

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return _without_partial_writes(await super().aget_tuple(config))  # type: ignore[misc]
