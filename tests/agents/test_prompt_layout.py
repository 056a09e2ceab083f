"""A round's judge calls share their prefix (issue 42), and cached prompt tokens are accounted.

The seven judges of a round are told the same rules and shown the same problem; only their level
differs. Laid out shared part first, the seven requests begin with the same bytes, which a server's
prompt cache (llama.cpp's, vLLM's, OpenAI's) evaluates once. What the server reports it served from
its cache is kept per call and priced at the cached-input price.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from agents.fencing import fence
from agents.judges import JudgeRequest, Layout, LLMJudge, judge_messages, judge_payload
from agents.llm.client import LLMClient
from agents.llm.models import ModelRegistry, ModelSpec, Price
from agents.llm.wire import cached_prompt_tokens
from agents.panel import PanelFactory
from agents.schemas import JUDGES, JudgeName, Problem
from agents.simulator import Rule, SimulatorServer
from agents.simulator.replies import role_of
from app.runs.temporary import temporary_runs
from app.validity.service import builtin_set, select_split
from graphs.benches.validity import bench
from graphs.context import RunContext
from graphs.result import RunResult
from graphs.scoring import get_policy
from prompts import load_prompt, panel_prefix
from tests.helpers import driving
from tests.helpers.problems import ORCHESTRA

Sim = Callable[..., SimulatorServer]
REQUEST = JudgeRequest("apply", 2, ORCHESTRA, ORCHESTRA)
LAYOUTS: tuple[Layout, ...] = ("panel_prefix", "shared_prefix", "level_first")
# The sha256 of what the slow validity test below ended with (387 versions) on the code before
# issue 54, whose judges were told the rules, the problem and their level (``shared_prefix``).
BEFORE_ISSUE_54 = "b23800fee1cb78eebff6606aa5d7da0412e2378074ac4fd75c8ee625cda5bcc1"


def _common_prefix(texts: list[str]) -> str:
    """The longest string every text starts with."""
    low, high = min(texts), max(texts)  # whatever the lowest and the highest share, all share
    size = next(
        (i for i, (a, b) in enumerate(zip(low, high, strict=False)) if a != b), min(len(low), len(high))
    )
    return low[:size]


def _serialised(body: dict[str, Any]) -> str:
    """A request's messages as a server reads them: roles and contents, in order."""
    return "".join(f"<{m['role']}>{m['content']}" for m in body["messages"])


async def _judge_round(client: LLMClient, request: JudgeRequest = REQUEST) -> None:
    judge = LLMJudge(client)
    await asyncio.gather(
        *(
            judge.assess(JudgeRequest(name, request.round, request.problem, request.reference))
            for name in JUDGES
        )
    )


async def test_a_rounds_seven_judge_calls_begin_with_the_same_rules_and_problem(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    server = sim()
    await _judge_round(client())
    bodies = [r.body for r in server.state.requests]
    assert len(bodies) == len(JUDGES)
    data = fence(judge_payload(REQUEST))
    rules = load_prompt("judge_apply").shared
    # What the seven share comes first, byte for byte: the rules, then the problem and its reference.
    shared = _common_prefix([_serialised(body) for body in bodies])
    assert shared.startswith(f"<system>{rules}<user>{data}")
    # Then each judge's own level, and nothing else.
    assert sorted(_judge_of(body) for body in bodies) == sorted(JUDGES)
    for body in bodies:
        own = load_prompt(f"judge_{_judge_of(body)}").own
        assert body["messages"] == [
            {"role": "system", "content": rules},
            {"role": "user", "content": f"{data}\n\n{own}"},
        ]


def _judge_of(body: dict[str, Any]) -> JudgeName:
    role = role_of(body)
    for name in JUDGES:
        if load_prompt(f"judge_{name}").own.splitlines()[0] == f"# {role}":
            return name
    raise AssertionError(role)


@pytest.mark.parametrize("judge", JUDGES)
def test_the_older_layouts_change_the_order_not_what_a_judge_is_told(judge: JudgeName) -> None:
    prompt = load_prompt(f"judge_{judge}")
    request = JudgeRequest(judge, 1, ORCHESTRA, ORCHESTRA)
    shared = judge_messages(request, prompt, "shared_prefix")
    first = judge_messages(request, prompt, "level_first")

    def paragraphs(messages: list[Any]) -> list[str]:
        return sorted(p.strip() for m in messages for p in str(m.content).split("\n\n") if p.strip())

    assert paragraphs(shared) == paragraphs(first)
    assert shared[0].content == load_prompt("judge_remember").rules  # the same system message for all
    assert str(first[0].content).startswith(prompt.level)  # the level first, as before issue 42


@pytest.mark.parametrize("judge", JUDGES)
def test_a_judge_is_told_every_level_and_named_its_own_last(judge: JudgeName) -> None:
    """The panel's prefix holds the rules and all seven levels' questions and scales; the line after
    the problem names this judge's level (its heading) and nothing else."""
    prompt = load_prompt(f"judge_{judge}")
    system, user = judge_messages(JudgeRequest(judge, 1, ORCHESTRA, ORCHESTRA), prompt)
    assert system.content == prompt.shared == panel_prefix()
    assert str(system.content).startswith(prompt.rules)
    for name in JUDGES:
        assert load_prompt(f"judge_{name}").level in str(system.content)
    assert str(user.content).endswith(f"\n\n{prompt.own}") and "\n" not in prompt.own
    assert prompt.own.startswith(prompt.level.splitlines()[0])  # '# Judge: Apply', as a rule finds it
    others = [load_prompt(f"judge_{n}").level.splitlines()[0][2:] for n in JUDGES if n != judge]
    assert not any(other in prompt.own for other in others)


def test_the_panels_prefix_is_long_enough_for_openais_prompt_cache() -> None:
    """OpenAI caches a prompt's prefix from 1,024 tokens on. The prefix is at least that long at five
    characters a token, more than English text takes in any common tokenizer (about four)."""
    prefix = panel_prefix()
    assert len(prefix) >= 5 * 1024
    assert {load_prompt(f"judge_{name}").shared for name in JUDGES} == {prefix}
    # Nor does it hold a word a scripted rule matches a problem by (tests' ``contains``).
    assert not any(word in prefix for word in (" km", "hour", "percent", "orchestra", "score this"))


@pytest.mark.parametrize("layout", ["panel_prefix", "shared_prefix", "level_first"])
async def test_a_panel_factorys_judges_send_the_layout_it_was_given(
    sim: Sim, spec: Callable[..., ModelSpec], layout: Layout
) -> None:
    """The panel every run uses lays its judges' requests out as its factory says (the panel's prefix
    unless told otherwise): how the validity bench compares the layouts on one panel."""
    server = sim()
    registry = ModelRegistry({"sim": spec()})
    factory = (
        PanelFactory(registry, {})  # the default
        if layout == "panel_prefix"
        else PanelFactory(registry, {}, judge_layout=layout)
    )
    async with factory:
        panel = factory.build("sim", "sim")
        outcome = await panel.judges["apply"].assess(REQUEST)
    (request,) = server.state.requests
    prompt = load_prompt("judge_apply")
    expected = [
        {"role": role, "content": str(m.content)}
        for role, m in zip(("system", "user"), judge_messages(REQUEST, prompt, layout), strict=True)
    ]
    assert request.body["messages"] == expected
    system = expected[0]["content"]
    told = {"panel_prefix": prompt.shared, "shared_prefix": prompt.rules}
    assert system.startswith(prompt.level) if layout == "level_first" else system == told[layout]
    # The version recorded is of what this layout told the judge.
    assert (outcome.prompt_version == prompt.version) is (layout == "panel_prefix")


async def test_in_prompt_mode_the_schema_goes_last_so_the_holistic_judge_shares_the_prefix(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    server = sim()
    judge = LLMJudge(client(structured_output="prompt"))
    for name in ("apply", "holistic"):
        outcome = await judge.assess(JudgeRequest(name, 1, ORCHESTRA, ORCHESTRA))
        assert outcome.verdict is not None, outcome.abstain_reason
    apply, holistic = (r.body["messages"] for r in server.state.requests)
    assert apply[0] == holistic[0]  # the system message: the shared rules alone
    assert "named JudgeVerdict" in apply[-1]["content"] and "named HolisticVerdict" in holistic[-1]["content"]


async def test_simulator_rules_still_find_each_judge_by_its_level(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    sim([Rule(role="Judge: Apply", score=12), Rule(role="^Judge", score=95)])
    judge = LLMJudge(client())
    apply = await judge.assess(JudgeRequest("apply", 1, ORCHESTRA, ORCHESTRA))
    remember = await judge.assess(JudgeRequest("remember", 1, ORCHESTRA, ORCHESTRA))
    assert apply.verdict is not None and apply.verdict.score == 12
    assert remember.verdict is not None and remember.verdict.score == 95


@pytest.mark.parametrize(
    ("reply", "cached"),
    [
        (
            {"usage": {"prompt_tokens": 900, "prompt_tokens_details": {"cached_tokens": 768}}},
            768,
        ),  # OpenAI, vLLM
        ({"usage": {"prompt_tokens": 900, "prompt_cache_hit_tokens": 640}}, 640),  # DeepSeek
        ({"usage": {"prompt_tokens": 900}, "timings": {"cache_n": 812, "prompt_n": 88}}, 812),  # llama.cpp
        ({"usage": {"prompt_tokens": 900}}, None),  # says nothing: not zero, unknown
        ({"usage": {"prompt_tokens_details": {"cached_tokens": True}}}, None),
    ],
)
def test_cached_prompt_tokens_are_read_where_each_server_family_reports_them(
    reply: dict[str, Any], cached: int | None
) -> None:
    assert cached_prompt_tokens(reply) == cached


def test_cached_input_is_priced_at_the_cached_price() -> None:
    price = Price(input_per_mtok=0.15, output_per_mtok=0.60, cached_input_per_mtok=0.075)
    assert price.cost(1_000_000, 0, cached_input_tokens=600_000) == pytest.approx(0.4 * 0.15 + 0.6 * 0.075)
    # No cached price given: cached tokens cost what other input costs.
    assert Price(input_per_mtok=0.15, output_per_mtok=0.6).cost(1_000_000, 0, 600_000) == pytest.approx(0.15)


@pytest.mark.parametrize("stream", [False, True])
async def test_an_openai_style_prompt_cache_is_counted_and_priced_per_call(
    sim: Sim, client: Callable[..., LLMClient], stream: bool
) -> None:
    """The simulator's OpenAI mode: the longest prefix shared with an answered prompt, in 128-token
    blocks from a minimum. The second judge of a round finds the first's rules and problem."""
    server = sim(profile_overrides={"prompt_cache_min_tokens": 128})
    price = Price(input_per_mtok=1.0, output_per_mtok=2.0, cached_input_per_mtok=0.25)
    judge = LLMJudge(client(price=price, stream=stream))
    first = await judge.assess(JudgeRequest("apply", 1, ORCHESTRA, ORCHESTRA))
    second = await judge.assess(JudgeRequest("remember", 1, ORCHESTRA, ORCHESTRA))
    assert first.usage.cached_input_tokens == 0
    shared = len(_common_prefix([_joined(r.body) for r in server.state.requests])) // 4
    assert second.usage.cached_input_tokens == 128 + (shared - 128) // 128 * 128 > 128
    usage = second.usage
    fresh = usage.input_tokens - usage.cached_input_tokens
    expected = (fresh * 1.0 + usage.cached_input_tokens * 0.25 + usage.output_tokens * 2.0) / 1e6
    assert usage.cost_usd == pytest.approx(expected)
    assert (first.usage + second.usage).cached_input_tokens == usage.cached_input_tokens


def _joined(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


async def test_a_server_that_reports_no_cache_counts_none(sim: Sim, client: Callable[..., LLMClient]) -> None:
    sim()
    judge = LLMJudge(client())
    await judge.assess(JudgeRequest("apply", 1, ORCHESTRA, ORCHESTRA))
    again = await judge.assess(JudgeRequest("remember", 1, ORCHESTRA, ORCHESTRA))
    assert again.usage.cached_input_tokens == 0 and again.usage.input_tokens > 0


async def test_scripted_judges_give_the_same_verdicts_in_every_layout(
    sim: Sim, client: Callable[..., LLMClient]
) -> None:
    """What a scripted judge answers depends on who it is and what it reads, which the layout keeps:
    the same rules, seven judges and problems give the same verdicts in every layout."""
    rules = [
        Rule(role="Judge: Apply", contains="orchestra", score=20),
        Rule(role="Judge: Evaluate", score=55),
        Rule(role="Five Keys", score=70),
        Rule(role="^Judge", score=92),
    ]
    verdicts: dict[str, list[tuple[str, int | None]]] = {}
    for layout in LAYOUTS:
        sim(rules=rules)
        judge = LLMJudge(client(), layout=layout)
        outcomes = [await judge.assess(JudgeRequest(name, 1, ORCHESTRA, ORCHESTRA)) for name in JUDGES]
        verdicts[layout] = [(o.judge, o.verdict.score if o.verdict else None) for o in outcomes]
    assert verdicts["panel_prefix"] == verdicts["shared_prefix"] == verdicts["level_first"]
    assert {score for _, score in verdicts["panel_prefix"]} == {20, 55, 70, 92}


@pytest.mark.slow
@pytest.mark.timeout(900)
async def test_the_validity_bench_on_the_held_out_part_gives_the_same_verdicts_in_every_layout(
    sim: Sim, spec: Callable[..., ModelSpec]
) -> None:
    """The validity bench (each version of the shipped held-out part a run of round 1, as `judges
    validate` drives it) with scripted judges that answer by who they are and what they read: every
    version ends the same way, with the same votes, whichever layout the judges' requests take."""
    rules = [  # by level and by what the problem says, so that versions end differently
        Rule(role="Judge: Apply", contains=" km", score=20),
        Rule(role="Judge: Evaluate", contains="hour", score=35),
        Rule(role="Five Keys", contains="percent", score=40),
        Rule(role="Judge: Understand", contains=" km", score=55),
        Rule(role="^Judge|Five Keys", score=92),
    ]
    held_out = select_split(builtin_set(), "heldout", "the shipped set")
    scoring = get_policy("default")
    ended: dict[str, list[tuple[str, str, str, str, tuple[tuple[str, float | None], ...]]]] = {}
    for layout in LAYOUTS:
        sim(rules=rules)
        factory = PanelFactory(ModelRegistry({"sim": spec()}), {}, judge_layout=layout)
        context = RunContext.of(factory.build("sim", "sim"), replace(scoring, max_rounds=1))
        async with factory, temporary_runs(driving.settings(), factory) as runs:

            async def drive(problem: Problem, context: RunContext = context) -> RunResult:
                return await runs.run(problem, context, model="sim", judge_model="sim")

            judged = await bench(held_out, drive, scoring)  # as `judges validate` judges them
        ended[layout] = sorted(
            (j.item, j.version, j.twin, j.decision, tuple((v.judge, v.score) for v in j.votes))
            for j in judged
        )
    assert ended["panel_prefix"] == ended["shared_prefix"] == ended["level_first"]
    # The very versions, decisions and votes the shipped layout gave before issue 54's prefix (its
    # rules and levels as they were then; measured on that code).
    assert hashlib.sha256(json.dumps(ended["panel_prefix"]).encode()).hexdigest() == BEFORE_ISSUE_54
    assert len(ended["panel_prefix"]) > len(held_out)  # flawed problems with their corrected versions
    decisions = {decision for _, _, _, decision, _ in ended["panel_prefix"]}
    # needs_review: an acceptance whose final answer rests on a step the verifier could not check
    assert {"accepted", "exhausted"} <= decisions <= {"accepted", "exhausted", "needs_review"}
