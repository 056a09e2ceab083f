"""A checkpoint written before a state type was renamed still loads: its old name is an alias."""

from __future__ import annotations

from pydantic import BaseModel

from agents.schemas import FiveKeys, HolisticReply, JudgeReply
from graphs.checkpoint import state_serde

KEYS = FiveKeys(concepts="c", prerequisites="p", representations="r", alternative_values="a", narrative="n")


def _as_before(schema: type[BaseModel], old: str) -> type[BaseModel]:
    """The class as it was named before #56, where checkpoints then written found it."""
    return type(old, (schema,), {"__module__": "agents.schemas", "__doc__": schema.__doc__})


def test_a_checkpoint_naming_the_replies_by_their_old_names_loads() -> None:
    serde = state_serde()
    replies: list[BaseModel] = [
        JudgeReply(rationale="Sound.", score=90, confidence=80),
        HolisticReply(rationale="Fine.", score=80, confidence=70, five_keys=KEYS, suggestions=["s"]),
    ]
    old = [
        _as_before(JudgeReply, "JudgeVerdict").model_validate(replies[0].model_dump()),
        _as_before(HolisticReply, "HolisticVerdict").model_validate(replies[1].model_dump()),
    ]
    kind, data = serde.dumps_typed({"replies": old})
    assert b"\xacJudgeVerdict" in data and b"\xafHolisticVerdict" in data and b"Reply" not in data
    loaded = serde.loads_typed((kind, data))["replies"]
    assert [type(r) for r in loaded] == [JudgeReply, HolisticReply] and loaded == replies
