"""What a server says about itself: its slots, each slot's context, and the model file it serves.

llama.cpp's server reports, beside ``/v1``: ``GET /props`` (``total_slots``,
``default_generation_settings.n_ctx`` for the context of one slot, ``model_path`` for the file it
loaded) and, in ``GET /v1/models``, each model's ``meta`` (``n_ctx``, ``n_ctx_train``,
``n_params``, ``size`` in bytes). vLLM reports each served model's ``root`` (the weights it was
started from) and ``max_model_len``. Every reply of such a server names only its ``--alias`` (or
``--served-model-name``): the file's identity is what tells two models behind one name apart, so it
joins the reported model id (:meth:`ServerInfo.reported`) that a panel's identity holds.

Asked once per client, through the chat model's own OpenAI client, with no retry and a short
timeout; a route a server does not have (OpenAI, most gateways) says nothing, and nothing fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agents.llm.models import ModelSpec
from agents.llm.slots import PROPS_TIMEOUT_S, props_url


@dataclass(frozen=True)
class ModelFile:
    """The weights a server serves, as far as it says (None: not said)."""

    name: str | None = None  # llama.cpp: the file name of /props model_path; vLLM: the model root
    size_bytes: int | None = None
    parameters: int | None = None
    context_train: int | None = None  # the context the model was trained with

    def identity(self) -> str:
        """What tells these weights from others served under the same name (empty: nothing known)."""
        parts = [f"file {self.name}"] if self.name else []
        if self.size_bytes is not None:
            parts.append(f"{self.size_bytes} bytes")
        if self.parameters is not None:
            parts.append(f"{self.parameters} parameters")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        """A plain dict (for JSON output)."""
        return {
            "name": self.name,
            "size_bytes": self.size_bytes,
            "parameters": self.parameters,
            "context_train": self.context_train,
        }


@dataclass(frozen=True)
class ServerInfo:
    """What the server reported about itself (every field None or empty where it said nothing)."""

    slots: int | None = None  # requests it generates for at once (llama.cpp's --parallel)
    context: int | None = None  # tokens one request may hold, prompt and reply (a slot's n_ctx)
    model_id: str | None = None  # the id /v1/models lists for the configured model
    model_file: ModelFile | None = None

    def reported(self, model_id: str | None) -> str | None:
        """The reported model id with the file's identity, where the server exposes one: the id the
        panel identity holds. None (the endpoint never answered) stays None."""
        identity = self.model_file.identity() if self.model_file else ""
        if model_id is None or not identity:
            return model_id
        return f"{model_id} [{identity}]".lstrip()


def models_url(spec: ModelSpec) -> str | None:
    """``/v1/models`` of the configured server (None: the OpenAI default endpoint and Azure)."""
    if spec.base_url is None or spec.provider != "openai":
        return None
    parts = urlsplit(spec.base_url)
    return urlunsplit((parts.scheme, parts.netloc, f"{parts.path.rstrip('/')}/models", "", ""))


async def server_info(spec: ModelSpec, chat: Any) -> ServerInfo:
    """What ``spec``'s server says about itself in ``/props`` and ``/v1/models`` (once, no retry)."""
    client = getattr(chat, "root_async_client", None)
    if client is None:
        return ServerInfo()
    props = await get_json(client, props_url(spec), spec)
    listed = await get_json(client, models_url(spec), spec)
    entry = _entry(listed, spec.model)
    meta = _object(entry.get("meta"))
    context = _count(_object(props.get("default_generation_settings")).get("n_ctx"))
    return ServerInfo(
        slots=_count(props.get("total_slots")),
        context=context or _count(meta.get("n_ctx")) or _count(entry.get("max_model_len")),
        model_id=entry.get("id") if isinstance(entry.get("id"), str) else None,
        model_file=_model_file(props, entry, meta),
    )


async def get_json(client: Any, url: str | None, spec: ModelSpec) -> dict[str, Any]:
    """A GET of ``url`` as a JSON object; ``{}`` when there is no such route, or no object."""
    if url is None:
        return {}
    options: dict[str, Any] = {"max_retries": 0, "timeout": min(spec.timeout_s, PROPS_TIMEOUT_S)}
    try:
        found = await client.get(url, cast_to=object, options=options)
    except Exception:  # a 404 (most servers), a refusal or non-JSON: the server does not say, silently
        return {}
    return found if isinstance(found, dict) else {}


def _entry(listed: dict[str, Any], model: str) -> dict[str, Any]:
    """The /v1/models entry of ``model`` (by id or llama.cpp alias); the only one when it serves one."""
    data = [d for d in listed.get("data") or [] if isinstance(d, dict)]
    for item in data:
        aliases = item.get("aliases")
        if item.get("id") == model or (isinstance(aliases, list) and model in aliases):
            return item
    return data[0] if len(data) == 1 else {}


def _model_file(props: dict[str, Any], entry: dict[str, Any], meta: dict[str, Any]) -> ModelFile | None:
    path = props.get("model_path")
    root = entry.get("root")
    name = path.replace("\\", "/").rsplit("/", 1)[-1] if isinstance(path, str) and path else None
    found = ModelFile(
        name=name or (root if isinstance(root, str) and root else None),
        size_bytes=_count(meta.get("size")),
        parameters=_count(meta.get("n_params")),
        context_train=_count(meta.get("n_ctx_train")),
    )
    return found if found.identity() else None


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _count(value: object) -> int | None:
    """A positive whole number, or None (absent, zero, or not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return int(value)
