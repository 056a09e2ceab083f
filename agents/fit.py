"""Whether the panel's judge prompts fit the server: ``models check``'s prediction of a run.

A judge's request holds the shared rules, the version under review, its reference (from round 2 on:
the version it revises) and the judge's own level; the server must hold that prompt and the reply's
``max_tokens`` in one slot's context, or it refuses the call (llama-server: HTTP 400 "exceeds the
available context size"). So each judge's real prompt is rendered for a long problem judged against
a reference as long as itself, and counted by the server's own tokenizer where it has one
(llama.cpp: ``POST /apply-template`` renders the chat template, ``POST /tokenize`` counts), else
estimated from its characters (and marked so).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage

from agents.judges import JudgeRequest, Layout, judge_messages
from agents.llm.models import ModelSpec
from agents.llm.slots import PROPS_TIMEOUT_S, props_url
from agents.llm.structured import Mode, llm_schema, schema_name, with_instructions
from agents.llm.timeouts import CHARS_PER_TOKEN
from agents.schemas import HOLISTIC, JUDGES, HolisticReply, JudgeName, JudgeReply, Problem
from prompts import load_prompt

# A long problem (535 words with its solution; 2,502 characters) for the check's prompts: judged against a
# reference as long as itself, as from round 2 on.
LONG_PROBLEM = Problem(
    question=(
        "A school garden club plans its spring planting on three plots. Plot A is a rectangle 12 metres "
        "long and 7 metres wide; plot B is a rectangle 9 metres long and 8 metres wide; plot C is a "
        "square with sides of 6 metres. The club will plant tomatoes on plot A, beans on plot B and "
        "herbs on plot C. Each square metre of tomatoes needs 4 litres of water a day, each square "
        "metre of beans needs 3 litres a day, and each square metre of herbs needs 2 litres a day. The "
        "club's rain barrel holds 900 litres when it is full, and a full barrel is refilled only when "
        "it rains. Tomato seedlings are planted 50 centimetres apart in rows that are also 50 "
        "centimetres apart, starting 25 centimetres from each edge of the plot. Bean seeds are sown 20 "
        "centimetres apart in rows 40 centimetres apart, starting 20 centimetres from each edge. A "
        "tray of tomato seedlings holds 24 seedlings and costs 9 dollars; a packet of bean seeds holds "
        "60 seeds and costs 3 dollars; herbs are bought as 36 small pots at 2 dollars each. The club "
        "has a budget of 150 dollars for plants and seeds. Members water the plots every morning. If "
        "it does not rain, for how many whole days does one full barrel water all three plots? How many "
        "trays of tomato seedlings and packets of bean seeds must the club buy, and does the total cost "
        "of the trays, the packets and the herb pots stay within the budget? Explain each step."
    ),
    solution=(
        "Areas: plot A is 12 × 7 = 84 square metres, plot B is 9 × 8 = 72 square metres and plot C is "
        "6 × 6 = 36 square metres. Daily water: tomatoes 84 × 4 = 336 litres, beans 72 × 3 = 216 "
        "litres, herbs 36 × 2 = 72 litres, so 336 + 216 + 72 = 624 litres a day. One full barrel of "
        "900 litres covers 900 ÷ 624 ≈ 1.44, so one whole day. Tomatoes: along the 12-metre side the "
        "rows run from 0.25 m to 11.75 m in steps of 0.5 m, which is 11.5 ÷ 0.5 + 1 = 24 positions; "
        "along the 7-metre side from 0.25 m to 6.75 m, 6.5 ÷ 0.5 + 1 = 14 positions; 24 × 14 = 336 "
        "seedlings, and 336 ÷ 24 = 14 trays, costing 14 × 9 = 126 dollars. Beans: along the 9-metre "
        "side seeds run from 0.2 m to 8.8 m every 0.2 m, 8.6 ÷ 0.2 + 1 = 44 seeds a row; rows run "
        "along the 8-metre side from 0.2 m to 7.8 m every 0.4 m, 7.6 ÷ 0.4 + 1 = 20 rows; 44 × 20 = "
        "880 seeds, so 880 ÷ 60 ≈ 14.7, that is 15 packets costing 15 × 3 = 45 dollars. Herbs cost "
        "36 × 2 = 72 dollars. The total is 126 + 45 + 72 = 243 dollars, which is 93 dollars over the "
        "budget of 150 dollars. Answer: one whole day; 14 trays and 15 packets; the cost of 243 "
        "dollars does not stay within the budget."
    ),
)


@dataclass(frozen=True)
class PromptFit:
    """One judge's prompt for the long problem, and whether it fits a slot with its reply."""

    judge: JudgeName
    tokens: int
    counted: str  # "server /tokenize" (with the chat template where /apply-template exists) or "estimated"
    max_tokens: int
    context: int | None  # tokens one slot holds (None: the server does not say)

    @property
    def fits(self) -> bool | None:
        """Whether prompt and reply fit the slot (None: the context is not known)."""
        return None if self.context is None else self.tokens + self.max_tokens <= self.context

    def as_dict(self) -> dict[str, Any]:
        """A plain dict (for JSON output)."""
        return {
            "judge": self.judge,
            "prompt_tokens": self.tokens,
            "counted": self.counted,
            "max_tokens": self.max_tokens,
            "context": self.context,
            "fits": self.fits,
        }

    def misfit(self) -> str | None:
        """Why every call of this judge will fail (None: it fits, or nothing is known)."""
        if self.fits is not False:
            return None
        return (
            f"the {self.judge} judge's prompt for a long problem ({self.tokens:,} tokens, counted by "
            f"{self.counted}) and its max_tokens ({self.max_tokens:,}) need "
            f"{self.tokens + self.max_tokens:,} tokens, and a slot of the server holds {self.context:,}: "
            "give each slot more context "
            "(llama-server: a larger --ctx-size, or fewer --parallel slots) or lower max_tokens.judge"
        )


def judge_prompt(judge: JudgeName, mode: Mode, layout: Layout = "panel_prefix") -> list[BaseMessage]:
    """What ``judge`` is sent for the long problem against a reference as long, in ``mode``."""
    request = JudgeRequest(judge, 2, LONG_PROBLEM, LONG_PROBLEM)
    messages = judge_messages(request, load_prompt(f"judge_{judge}"), layout)
    return with_instructions(messages, judge_schema(judge), mode)


async def judge_fits(spec: ModelSpec, chat: Any, mode: Mode, context: int | None) -> list[PromptFit]:
    """Every judge's prompt for the long problem, counted, beside its reply bound and the context."""
    client = getattr(chat, "root_async_client", None)
    fits = []
    for judge in JUDGES:
        body = request_body(judge, mode)
        counted = await _server_count(client, spec, body) if client is not None else None
        tokens, how = counted or (_estimate(body), "estimated")
        fits.append(PromptFit(judge, tokens, how, spec.max_tokens.judge, context))
    return fits


def request_body(judge: JudgeName, mode: Mode) -> dict[str, Any]:
    """The chat messages (and the tool, in tool-calling mode) of ``judge``'s request."""
    messages = [
        {"role": "system" if isinstance(m, SystemMessage) else "user", "content": str(m.content)}
        for m in judge_prompt(judge, mode)
    ]
    body: dict[str, Any] = {"messages": messages}
    if mode == "tool_calling":
        schema = judge_schema(judge)
        body["tools"] = [
            {"type": "function", "function": {"name": schema_name(schema), "parameters": llm_schema(schema)}}
        ]
    return body


async def _server_count(client: Any, spec: ModelSpec, body: dict[str, Any]) -> tuple[int, str] | None:
    """The prompt's tokens by the server's tokenizer, or None where it has no ``/tokenize``."""
    props = props_url(spec)
    if props is None:
        return None
    root = props.removesuffix("/props")
    rendered = await _post(client, f"{root}/apply-template", body, spec)
    prompt = rendered.get("prompt") if isinstance(rendered.get("prompt"), str) else None
    content = prompt if prompt is not None else "\n".join(m["content"] for m in body["messages"])
    counted = await _post(client, f"{root}/tokenize", {"content": content, "add_special": True}, spec)
    found = counted.get("tokens")
    if not isinstance(found, list):
        return None
    how = "server /apply-template and /tokenize" if prompt is not None else "server /tokenize, no template"
    return len(found), how


async def _post(client: Any, url: str, body: dict[str, Any], spec: ModelSpec) -> dict[str, Any]:
    """A POST answered with a JSON object; ``{}`` when the server has no such route."""
    options: dict[str, Any] = {"max_retries": 0, "timeout": min(spec.timeout_s, PROPS_TIMEOUT_S)}
    try:
        found = await client.post(url, body=body, cast_to=object, options=options)
    except Exception:  # a 404 (every server but llama.cpp's) or a refusal: then the prompt is estimated
        return {}
    return found if isinstance(found, dict) else {}


def _estimate(body: dict[str, Any]) -> int:
    """The prompt's tokens from its characters (generous: ``CHARS_PER_TOKEN``)."""
    chars = sum(len(json.dumps(m["content"])) for m in body["messages"])
    chars += len(json.dumps(body["tools"])) if "tools" in body else 0
    return int(chars / CHARS_PER_TOKEN)


def judge_schema(judge: JudgeName) -> type[JudgeReply]:
    """The verdict schema ``judge`` answers in."""
    return HolisticReply if judge == HOLISTIC else JudgeReply
