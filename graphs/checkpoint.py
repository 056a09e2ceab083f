"""Serialization of the graph state for LangGraph checkpointers: our types, allow-listed."""

from __future__ import annotations

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

# Every pydantic type that can appear inside RefinementState.
STATE_TYPES: list[tuple[str, str]] = [
    ("agents.schemas", name)
    for name in (
        "Problem",
        "JudgeVerdict",
        "HolisticVerdict",
        "FiveKeys",
        "Usage",
        "JudgeResult",
        "RevisionResult",
        "Solution",
        "SolverResult",
        "CallFailure",
    )
] + [("graphs.state", "RoundRecord"), ("graphs.state", "RoundFigures")]


def state_serde() -> JsonPlusSerializer:
    """A serializer that restores our state types and refuses unknown ones."""
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)
