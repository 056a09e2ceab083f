"""SSE transcripts against a real uvicorn server: live, replay, resume, concurrent subscribers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse

from agents.simulator import Rule, SimulatorServer
from tests.helpers.problems import PROBLEM
from tests.helpers.processes import within
from tests.helpers.service import Keys, LiveServer, Service

pytestmark = pytest.mark.both_databases


async def collect(url: str, run_id: str, headers: dict[str, str]) -> list[dict[str, Any]]:
    events = []
    stream_url = f"{url}/v1/runs/{run_id}/events"
    async with (
        httpx.AsyncClient(timeout=30) as client,
        aconnect_sse(client, "GET", stream_url, headers=headers) as source,
    ):
        async for sse in source.aiter_sse():
            if not sse.data:  # a heartbeat comment; httpx-sse reports it with the previous id
                continue
            events.append({"id": int(sse.id), "event": sse.event, **json.loads(sse.data)})
    return events


async def frames(url: str, run_id: str, headers: dict[str, str]) -> list[tuple[str, str, str]]:
    """Each event's id, type and data as sent: the bytes of its JSON, key order included."""
    sent = []
    async with (
        httpx.AsyncClient(timeout=30) as client,
        aconnect_sse(client, "GET", f"{url}/v1/runs/{run_id}/events", headers=headers) as source,
    ):
        async for sse in source.aiter_sse():
            if sse.data:
                sent.append((sse.id, sse.event, sse.data))
    return sent


async def start_run(url: str, keys: Keys, judge_model: str = "sim") -> str:
    body = {"problem": PROBLEM, "options": {"model": "sim", "judge_model": judge_model, "max_rounds": 2}}
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{url}/v1/runs", json=body, headers=keys.auth())
    assert response.status_code == 202
    return str(response.json()["id"])


async def test_live_events_arrive_in_order_and_two_subscribers_agree(live: tuple[LiveServer, Keys]) -> None:
    server, keys = live
    run_id = await start_run(server.url, keys)
    first, second = await asyncio.gather(
        collect(server.url, run_id, keys.auth("read")), collect(server.url, run_id, keys.auth("read"))
    )
    assert first == second
    assert [e["id"] for e in first] == list(range(1, len(first) + 1))
    kinds = [e["event"] for e in first]
    assert kinds[0] == "run.started" and kinds[-1] == "run.finished"
    assert kinds[1] == "round.started" and kinds.count("judge.verdict") == 7 * kinds.count("round.scored")
    assert "reviser.thinking" not in kinds or kinds.index("reviser.thinking") < kinds.index(
        "revision.proposed"
    )
    assert first[-1]["outcome"] in {"accepted", "exhausted"}


async def test_replay_after_the_end_and_resume_from_last_event_id(live: tuple[LiveServer, Keys]) -> None:
    server, keys = live
    run_id = await start_run(server.url, keys)
    live_events = await collect(server.url, run_id, keys.auth("read"))
    replay = await collect(server.url, run_id, keys.auth("read"))
    assert replay == live_events
    resumed = await collect(server.url, run_id, keys.auth("read") | {"Last-Event-ID": "5"})
    assert resumed == live_events[5:]


async def test_heartbeats_keep_a_quiet_stream_alive(
    live: tuple[LiveServer, Keys], simulator_server: SimulatorServer
) -> None:
    server, keys = live
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"latency_s": 1.5}))
    run_id = await start_run(server.url, keys)
    lines: list[str] = []
    async with httpx.AsyncClient(timeout=30) as client:
        url = f"{server.url}/v1/runs/{run_id}/events"
        async with client.stream("GET", url, headers=keys.auth("read")) as response:
            async for line in response.aiter_lines():
                lines.append(line)
                if line.startswith(":"):
                    break
    assert any(line.startswith(": ping") for line in lines)


async def test_an_open_stream_holds_no_database_connection(
    live: tuple[LiveServer, Keys], simulator_server: SimulatorServer
) -> None:
    server, keys = live
    simulator_server.state.configure(simulator_server.state.config.model_copy(update={"latency_s": 1.5}))
    run_id = await start_run(server.url, keys)
    pool = server.app.state.engine.sync_engine.pool
    idle_samples = []
    async with httpx.AsyncClient(timeout=30) as client:
        url = f"{server.url}/v1/runs/{run_id}/events"
        async with client.stream("GET", url, headers=keys.auth("read")) as response:
            lines = response.aiter_lines()
            while not (await anext(lines)).startswith("data:"):
                pass  # the stream is open and has delivered its first event
            for _ in range(20):  # the run now waits on the slow model; nothing should hold a connection
                idle_samples.append(pool.checkedout())
                await asyncio.sleep(0.05)
    assert 0 in idle_samples, idle_samples


async def test_many_subscribers_get_every_event_once_from_memory(
    live: tuple[LiveServer, Keys], simulator_server: SimulatorServer
) -> None:
    from sqlalchemy import event

    server, keys = live
    state = simulator_server.state
    held = Rule(role="^Judge", score=40, delay_s=1.0, times=7)  # round 1 waits while subscribers connect
    state.configure(state.config.model_copy(update={"rules": [held, Rule(role="^Judge", score=40)]}))
    reads: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "FROM transcript_events" in statement and "transcript_events.seq >" in statement:
            reads.append(statement)

    engine = server.app.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        run_id = await start_run(server.url, keys)
        transcripts = await asyncio.gather(
            *(collect(server.url, run_id, keys.auth("read")) for _ in range(40))
        )
    finally:
        event.remove(engine, "before_cursor_execute", count)
    replay = await collect(server.url, run_id, keys.auth("read"))  # from the database, after the run
    assert all(transcript == replay for transcript in transcripts)
    assert "revision.proposed" in {e["event"] for e in replay} and replay[-1]["event"] == "run.finished"
    # The live run's events were fanned out from memory: no stream re-read the transcript per event.
    assert len(reads) <= 40, len(reads)


async def test_streams_on_another_process_end_with_the_runs_end_event(
    live: tuple[LiveServer, Keys], simulator_server: SimulatorServer, database_url: str
) -> None:
    """A second API process follows the run from the database alone: every stream must still end
    with run.finished (a run's end state and its end event are stored together)."""
    from app.main import create_app
    from tests.helpers.service import service_settings

    server, keys = live
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": [Rule(role="^Judge", score=40)]}))
    other = LiveServer(create_app(service_settings(database_url, simulator_server, sse_reread_s=0.005)))
    with other:
        run_id = await start_run(server.url, keys)
        transcripts = await asyncio.gather(
            *(collect(other.url, run_id, keys.auth("read")) for _ in range(30))
        )
    replay = await collect(server.url, run_id, keys.auth("read"))
    assert replay[-1]["event"] == "run.finished"
    assert [t[-1]["event"] for t in transcripts] == ["run.finished"] * 30
    assert all(t == replay for t in transcripts)


@pytest.mark.parametrize("judge", ["sim", "rubric"])
async def test_a_process_that_never_ran_the_run_replays_its_verdicts_whole(
    live: tuple[LiveServer, Keys], simulator_server: SimulatorServer, database_url: str, judge: str
) -> None:
    """A verdict's text is stored once, in its judgement row; its stored event keeps the headline.
    A process with nothing of the run in memory replays it from the database with the text joined
    back: the same events, byte for byte, as the live stream sent (the offline panel's too, whose
    verdicts carry an empty answer of their own that the row does not keep)."""
    from app.main import create_app
    from tests.helpers.service import service_settings

    server, keys = live
    state = simulator_server.state
    state.configure(state.config.model_copy(update={"rules": [Rule(role="^Judge", score=40, times=7)]}))
    run_id = await start_run(server.url, keys, judge_model=judge)
    live_events = await frames(server.url, run_id, keys.auth("read"))
    verdicts = [json.loads(data) for _, kind, data in live_events if kind == "judge.verdict"]
    assert len(verdicts) >= 7 and all(v["rationale"] and "reasoning" in v for v in verdicts)
    if judge == "rubric":
        assert {v["own_answer"] for v in verdicts} == {""}
    with LiveServer(create_app(service_settings(database_url, simulator_server))) as other:
        replay = await frames(other.url, run_id, keys.auth("read"))
    assert replay == live_events


async def held_elsewhere(database_url: str) -> str:
    """A running run whose lease a live process elsewhere holds: nothing here executes it."""
    from datetime import timedelta

    from app.db import create_engine, session_factory, short_session
    from app.models import Run, utcnow
    from app.runs.repository import get_or_create_problem

    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            problem = await get_or_create_problem(session, PROBLEM["question"], PROBLEM["solution"])
            run = Run(
                problem_id=problem.id,
                status="running",
                model="sim",
                judge_model="sim",
                policy="default",
                max_rounds=2,
                lease_owner="elsewhere:1",
                lease_until=utcnow() + timedelta(hours=1),
            )
            session.add(run)
        return run.id
    finally:
        await engine.dispose()


async def pinged(url: str, run_id: str, headers: dict[str, str], open_: asyncio.Event) -> list[str]:
    """Follow a stream to its end; ``open_`` is set at its first heartbeat (it is waiting by then)."""
    lines = []
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(30, read=None)) as client,
        client.stream("GET", f"{url}/v1/runs/{run_id}/events", headers=headers) as response,
    ):
        async for line in response.aiter_lines():
            if line.startswith(":"):
                open_.set()
            elif line:
                lines.append(line)
    return lines


async def test_a_run_cancelled_by_a_process_not_executing_it_ends_its_streams_everywhere(
    database_url: str, simulator_server: SimulatorServer
) -> None:
    from app.db import migrate
    from app.main import create_app
    from tests.helpers.service import seed_keys, service_settings

    await migrate(database_url)
    keys = await seed_keys(database_url)
    run_id = await held_elsewhere(database_url)
    # No re-read within the test, and no sweep that could take the run over.
    settings = service_settings(database_url, simulator_server, sse_reread_s=600, run_sweep_s=600)
    with LiveServer(create_app(settings)) as here, LiveServer(create_app(settings)) as there:
        # On PostgreSQL a stream on another process too; SQLite is one process.
        servers = [here, there] if database_url.startswith("postgresql") else [here]
        opened = [asyncio.Event() for _ in servers]
        streams = [
            asyncio.create_task(pinged(s.url, run_id, keys.auth("read"), o))
            for s, o in zip(servers, opened, strict=True)
        ]
        assert here.server.started and there.server.started
        await within(asyncio.gather(*(o.wait() for o in opened)), "a stream never opened")
        async with httpx.AsyncClient(timeout=30) as client:
            cancelled = await client.post(f"{here.url}/v1/runs/{run_id}/cancel", headers=keys.auth())
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        ended = await within(asyncio.gather(*streams), "a stream was not woken by the cancel")
    assert ended == [[]] * len(servers)  # nothing was stored to send: the streams just close


async def test_a_run_cancelled_elsewhere_keeps_its_verdicts_text_once(
    service: Service, database_url: str
) -> None:
    """A run ended by a cancel on a process not executing it has its end stored there: its verdict
    events are cut down to their headline in that transaction too, and read back whole."""
    from app.db import create_engine, session_factory, short_session
    from app.models import JudgementRow, TranscriptEvent
    from app.runs import repository as repo
    from graphs.events import JudgeVerdict

    run_id = await held_elsewhere(database_url)
    emitted = {
        "type": "judge.verdict",
        **{"round": 1, "judge": "apply", "score": 80, "confidence": 70, "rationale": "The totals add up."},
        **{"own_answer": "", "abstained": False, "abstain_reason": None, "failure": None, "reasoning": ""},
        **{"model": "sim", "usage": {"calls": 1}},
    }
    engine = create_engine(database_url)
    try:
        async with short_session(session_factory(engine)) as session:
            session.add(
                JudgementRow(
                    run_id=run_id,
                    round=1,
                    judge="apply",
                    score=80,
                    confidence=70,
                    rationale="The totals add up.",
                    model="sim",
                    prompt_version="v",
                )
            )
            session.add(TranscriptEvent(run_id=run_id, seq=1, type="judge.verdict", data=emitted))
        cancelled = await service.client.post(f"/v1/runs/{run_id}/cancel", headers=service.keys.auth())
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        async with short_session(session_factory(engine)) as session:
            rows = await repo.events_after(session, run_id, 0)
            whole = await repo.with_verdict_text(session, run_id, rows)
    finally:
        await engine.dispose()
    assert [row.data for row in rows] == [JudgeVerdict.headline(emitted)]
    assert [list(data.items()) for data in whole] == [list(emitted.items())]
