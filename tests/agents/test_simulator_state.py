"""The simulator's request log: what tests read of it must describe the current configuration only."""

from __future__ import annotations

from agents.simulator import SimConfig, SimulatorState


def test_an_answer_to_a_request_of_an_earlier_configuration_leaves_the_count_alone() -> None:
    """A request the previous test left stalled (its client gave up on a delayed reply) is answered
    after the simulator was configured again: the new count of calls in flight must not lose one,
    or two calls at once would read as one (the CI failure of ``test_concurrency_limit_is_respected``)."""
    state = SimulatorState()
    stalled = state.arrive("Judge", {}, "127.0.0.1:1")
    state.configure(SimConfig(gate=3))
    state.answer(stalled, 200)
    first, second = state.arrive("Judge", {}, "127.0.0.1:2"), state.arrive("Judge", {}, "127.0.0.1:3")
    assert (state.in_flight, state.max_in_flight) == (2, 2)
    state.answer(first, 200)
    state.answer(second, 200)
    assert (state.in_flight, state.max_in_flight) == (0, 2)
