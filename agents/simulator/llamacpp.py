"""The simulator as llama.cpp's ``llama-server`` describes itself: ``/props``, ``/v1/models``,
``/tokenize`` and ``/apply-template``, and the HTTP 400 for a prompt longer than a slot.

The field names are llama-server's own (tools/server/server-context.cpp of llama.cpp as vendored in
llama-cpp-python 0.3.36): ``/props`` has ``total_slots``, ``model_alias``, ``model_path`` and
``default_generation_settings.n_ctx`` (the context of one slot); each ``/v1/models`` entry has
``aliases`` and a ``meta`` object (``n_ctx``, ``n_ctx_train``, ``n_params``, ``size`` in bytes,
``n_vocab``); ``POST /tokenize`` answers ``{"tokens": [...]}``; ``POST /apply-template`` answers
``{"prompt": ...}``, the messages rendered through the chat template. vLLM's ``/v1/models`` names
the served weights in ``root`` and the context in ``max_model_len``.

The simulator's tokenizer is its usage estimate's: four characters a token. Its chat template is
Gemma's turn format.
"""

from __future__ import annotations

from typing import Any

from agents.simulator.rules import SimConfig

CHARS_PER_TOKEN = 4


def render(messages: list[dict[str, Any]]) -> str:
    """Messages in Gemma's turn format, ending where the model's turn begins."""
    turns = []
    for message in messages:
        role = "model" if message.get("role") == "assistant" else "user"
        turns.append(f"<start_of_turn>{role}\n{message.get('content') or ''}<end_of_turn>\n")
    return "".join(turns) + "<start_of_turn>model\n"


def tokens(text: str) -> list[int]:
    """The simulator's token ids of ``text``: one per four characters."""
    return [ord(text[i]) for i in range(0, len(text), CHARS_PER_TOKEN)]


def props(config: SimConfig) -> dict[str, Any]:
    """``GET /props``: the slots, the context of one, the model's alias and file."""
    found: dict[str, Any] = {
        "total_slots": config.slots,
        "model_alias": _model_id(config),
        "default_generation_settings": {"n_ctx": config.context, "params": {"n_predict": -1}},
    }
    if config.model_file is not None:
        found["model_path"] = config.model_file.path
    return found


def models(config: SimConfig) -> dict[str, Any]:
    """``GET /v1/models``: llama-server's ``meta`` when it has slots, vLLM's ``root`` for its profile."""
    entry: dict[str, Any] = {"id": _model_id(config), "object": "model", "owned_by": "sim"}
    file = config.model_file
    if config.slots > 0:
        meta: dict[str, Any] = {"n_ctx": config.context, "n_vocab": 262_144}
        if file is not None:
            meta |= {"n_ctx_train": file.n_ctx_train, "n_params": file.n_params, "size": file.size}
        entry |= {"aliases": [entry["id"]], "owned_by": "llamacpp", "meta": meta}
    elif config.profile == "vllm":
        entry |= {"root": file.path if file else entry["id"], "max_model_len": config.context}
    return {"object": "list", "data": [entry]}


def tokenized(body: dict[str, Any]) -> dict[str, Any]:
    """``POST /tokenize`` of ``{"content": ...}``."""
    return {"tokens": tokens(str(body.get("content") or ""))}


def applied(body: dict[str, Any]) -> dict[str, Any]:
    """``POST /apply-template`` of ``{"messages": [...]}``."""
    return {"prompt": render(list(body.get("messages") or []))}


def over_context(config: SimConfig, body: dict[str, Any]) -> dict[str, Any] | None:
    """llama-server's error for a prompt that does not fit a slot (HTTP 400), or None when it fits."""
    if config.slots <= 0:
        return None
    size = len(tokens(render(list(body.get("messages") or []))))
    if size < config.context:
        return None
    message = (
        f"request ({size} tokens) exceeds the available context size ({config.context} tokens), "
        "try increasing it"
    )
    return {"error": {"code": 400, "message": message, "type": "exceed_context_size_error"}}


def _model_id(config: SimConfig) -> str:
    return config.server.reported_model or "sim"
