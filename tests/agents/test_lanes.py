"""Lanes: a run holds one while it has model calls in flight, shared by its concurrent calls."""

from __future__ import annotations

import asyncio

import pytest

from agents.llm.lanes import Lanes, RunLane, Stopping, calling, holding


async def _call(gate: asyncio.Event, seen: list[str], name: str) -> None:
    async with calling():
        seen.append(f"{name} in")
        await gate.wait()
    seen.append(f"{name} out")


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_a_runs_concurrent_calls_share_one_lane_given_back_when_the_last_returns() -> None:
    lanes = Lanes(1)
    first, second = asyncio.Event(), asyncio.Event()
    seen: list[str] = []

    async def run(name: str, gate: asyncio.Event) -> None:
        with holding(RunLane(lanes)):
            await asyncio.gather(*(_call(gate, seen, f"{name}{i}") for i in range(3)))

    a = asyncio.create_task(run("a", first))
    await _settle()
    b = asyncio.create_task(run("b", second))
    await _settle()
    assert seen == ["a0 in", "a1 in", "a2 in"] and lanes.waiting == 1  # b waits for the one lane
    first.set()
    await a
    await _settle()
    assert seen[-3:] == ["b0 in", "b1 in", "b2 in"] and lanes.waiting == 0
    second.set()
    await b
    async with asyncio.timeout(5):  # hang guard: the lane is free again
        await lanes.take(fresh=True)


async def test_the_lane_is_free_between_a_runs_steps() -> None:
    lanes = Lanes(1)
    other = asyncio.Event()
    seen: list[str] = []
    run_lane = RunLane(lanes)
    with holding(run_lane):
        await _call(_set(asyncio.Event()), seen, "step1")
        waiting = asyncio.create_task(_holding_call(lanes, other, seen))
        await _settle()
        assert seen[-1] == "other in"  # took the lane between this run's steps
        step2 = asyncio.create_task(_call(_set(asyncio.Event()), seen, "step2"))
        await _settle()
        assert lanes.waiting == 1 and "step2 in" not in seen
        other.set()
        await asyncio.gather(waiting, step2)
    assert seen == ["step1 in", "step1 out", "other in", "other out", "step2 in", "step2 out"]


async def test_closing_hands_back_a_run_that_never_called_and_serves_one_that_did() -> None:
    lanes = Lanes(1)
    started = RunLane(lanes)
    with holding(started):
        await _call(_set(asyncio.Event()), [], "first")
    lanes.close()
    with holding(RunLane(lanes)), pytest.raises(Stopping):
        await _call(_set(asyncio.Event()), [], "fresh")
    seen: list[str] = []
    with holding(started):
        await _call(_set(asyncio.Event()), seen, "again")
    assert seen == ["again in", "again out"]


async def test_a_free_lane_goes_to_a_run_between_its_steps_before_a_fresh_one() -> None:
    lanes = Lanes(1)
    gate = asyncio.Event()
    seen: list[str] = []
    started = RunLane(lanes)
    with holding(started):
        await _call(_set(asyncio.Event()), [], "step1")  # it has called: between its steps now
    busy = asyncio.create_task(_holding_call(lanes, gate, []))
    await _settle()
    fresh = asyncio.create_task(_named_call(RunLane(lanes), seen, "fresh"))
    await _settle()
    with holding(started):
        step2 = asyncio.create_task(_call(_set(asyncio.Event()), seen, "step2"))
    await _settle()
    assert lanes.waiting == 2 and seen == []  # the fresh run asked first
    gate.set()
    await asyncio.gather(busy, fresh, step2)
    assert seen == ["step2 in", "step2 out", "fresh in", "fresh out"]


async def test_closing_hands_back_a_waiting_fresh_run_at_once_while_the_lanes_are_busy() -> None:
    lanes = Lanes(1)
    gate = asyncio.Event()
    busy = asyncio.create_task(_holding_call(lanes, gate, []))
    await _settle()
    fresh = asyncio.create_task(_holding_call(lanes, _set(asyncio.Event()), []))
    await _settle()
    lanes.close()
    with pytest.raises(Stopping):
        async with asyncio.timeout(5):  # hang guard: not after the busy lane is given back
            await fresh
    assert not busy.done() and lanes.waiting == 0
    gate.set()
    await busy
    async with asyncio.timeout(5):  # hang guard: the lane is free, the handed-back run took none
        await lanes.take(fresh=False)


async def test_a_waiter_cancelled_leaves_the_queue_and_a_lane_handed_to_it_passes_on() -> None:
    lanes = Lanes(1)
    await lanes.take(fresh=True)
    gone = asyncio.create_task(lanes.take(fresh=True))
    handed = asyncio.create_task(lanes.take(fresh=False))
    after = asyncio.create_task(lanes.take(fresh=True))
    await _settle()
    gone.cancel()
    await _settle()
    assert lanes.waiting == 2
    lanes.give_back()  # to `handed`, which is cancelled before it runs: the lane goes on to `after`
    handed.cancel()
    async with asyncio.timeout(5):
        await after
    assert gone.cancelled() and handed.cancelled() and lanes.waiting == 0


async def _named_call(lane: RunLane, seen: list[str], name: str) -> None:
    with holding(lane):
        await _call(_set(asyncio.Event()), seen, name)


async def test_calls_outside_a_run_pass_freely() -> None:
    seen: list[str] = []
    await asyncio.gather(*(_call(_set(asyncio.Event()), seen, str(i)) for i in range(3)))
    assert len(seen) == 6


async def _holding_call(lanes: Lanes, gate: asyncio.Event, seen: list[str]) -> None:
    with holding(RunLane(lanes)):
        await _call(gate, seen, "other")


def _set(event: asyncio.Event) -> asyncio.Event:
    event.set()
    return event
