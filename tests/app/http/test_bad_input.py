"""Client input never answers 500: a precise 4xx problem+json, nothing stored, and the keep-alive
connection still serving the next request (a 500 made uvicorn drop it)."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.datasets.parsing import DatasetError, parse_dataset
from app.models import RUN_TERMINAL
from app.text import storable
from tests.helpers.problems import PROBLEM
from tests.helpers.service import Keys, LiveServer

PROBLEM_JSON = "application/problem+json"
TYPES = "https://thinkloop.dev/problems/"
QUESTION = "A box holds 4 pens. How many pens are in 3 boxes?"


class Api:
    """An httpx client on one keep-alive connection to a live server, and what it is connected from."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.local_address = self.connection(client.get("/healthz"))

    @staticmethod
    def connection(response: httpx.Response) -> object:
        """The client side (address, port) of the TCP connection that carried ``response``."""
        return response.extensions["network_stream"].get_extra_info("client_addr")

    def refused(self, response: httpx.Response, status: int, slug: str, *needles: str) -> dict[str, object]:
        """Assert a problem+json answer of ``status`` and type ``slug`` naming every needle, and that
        the same connection carried it and still serves the next request."""
        assert response.status_code == status, response.text
        assert response.headers["content-type"] == PROBLEM_JSON
        body: dict[str, object] = response.json()
        assert body["type"] == TYPES + slug and body["status"] == status and body["title"], body
        for needle in needles:
            assert needle in response.text, (needle, body)
        assert self.connection(response) == self.local_address
        after = self.client.get("/healthz")
        assert after.status_code == 200 and self.connection(after) == self.local_address
        return body

    def stored(self, collection: str) -> list[object]:
        """The items of a collection (runs, datasets, batches) as listed."""
        listed = self.client.get(f"/v1/{collection}", params={"limit": 100})
        assert listed.status_code == 200, listed.text
        items: list[object] = listed.json()["items"]
        return items


@pytest.fixture
async def api(live: tuple[LiveServer, Keys]) -> AsyncIterator[Api]:
    """A client of the live server (SQLite and PostgreSQL) holding one connection."""
    server, keys = live
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    with httpx.Client(base_url=server.url, headers=keys.auth(), limits=limits, timeout=30) as client:
        yield Api(client)


def post_json(
    api: Api, path: str, body: str | bytes, content_type: str = "application/json"
) -> httpx.Response:
    """POST a body written by hand (httpx cannot encode a lone surrogate itself)."""
    return api.client.post(path, content=body, headers={"Content-Type": content_type})


# -- 1. text the database cannot hold ---------------------------------------------------------------

LONE_SURROGATE = "\\ud800"
NUL = "\\u0000"
UNSTORABLE_RUNS = [
    pytest.param({"question": f"How many? {LONE_SURROGATE}"}, "surrogate", id="question-surrogate"),
    pytest.param({"question": QUESTION, "solution": f"12 {LONE_SURROGATE}"}, "surrogate", id="solution"),
    pytest.param(
        {"question": QUESTION, "metadata": {"student": f"A{LONE_SURROGATE}"}}, "surrogate", id="meta"
    ),
    pytest.param({"question": QUESTION, "metadata": {f"k{LONE_SURROGATE}": 1}}, "surrogate", id="meta-key"),
    pytest.param({"question": QUESTION, "metadata": {"student": f"A{NUL}"}}, "NUL", id="meta-nul"),
    pytest.param({"question": QUESTION, "metadata": {f"k{NUL}": "v"}}, "NUL", id="meta-key-nul"),
    pytest.param({"question": f"How{NUL} many?"}, "NUL", id="question-nul"),
    pytest.param({"question": QUESTION, "metadata": {"a": "NaN"}}, "not finite", id="meta-nan"),
    pytest.param({"question": QUESTION, "metadata": {"a": 1e999}}, "inf is not finite", id="meta-inf"),
]


@pytest.mark.parametrize(("problem", "what"), UNSTORABLE_RUNS)
async def test_unstorable_text_in_a_run_is_a_422_and_nothing_is_stored(
    api: Api, problem: dict[str, object], what: str
) -> None:
    # json.dumps keeps our backslashes, so the server reads the escape itself.
    body = json.dumps({"problem": problem}).replace("\\\\u", "\\u").replace('"NaN"', "NaN")
    answer = api.refused(post_json(api, "/v1/runs", body), 422, "validation-error", what)
    assert str(answer["detail"]).startswith("The request does not match the schema: body.problem.")
    assert what in str(answer["detail"])
    assert api.stored("runs") == []


async def test_line_separators_are_ordinary_text_and_round_trip(api: Api) -> None:
    question = f"{QUESTION}\u2028Answer in pens.\u2029Why?"
    problem = {"question": question, "metadata": {"note": "a\u2028b"}}
    created = api.client.post("/v1/runs", json={"problem": problem})
    assert created.status_code == 202, created.text
    trace = api.client.get(f"/v1/runs/{created.json()['id']}").json()
    assert trace["question"] == question and trace["problem"]["metadata"] == {"note": "a\u2028b"}


@pytest.mark.parametrize(
    ("text", "message"),
    [("a\x00b", "NUL (U+0000)"), ("a\ud800b", "lone surrogate (U+D800)"), ("\udfff", "U+DFFF")],
)
def test_the_shared_check_names_the_character(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        storable(text)


def test_the_shared_check_keeps_ordinary_text() -> None:
    text = "Émile\u2028has 3 × 4 = 12 🍎\u2029\t\n"
    assert storable(text) is text


async def test_a_batch_naming_unstorable_text_is_a_422(api: Api) -> None:
    body = f'{{"dataset_id": "d{LONE_SURROGATE}", "models": ["m{NUL}"]}}'
    answer = api.refused(post_json(api, "/v1/batches", body), 422, "validation-error", "surrogate", "NUL")
    assert {tuple(error["loc"]) for error in answer["errors"]} == {  # type: ignore[attr-defined]
        ("body", "dataset_id"),
        ("body", "models", 0),
    }
    assert api.stored("batches") == []


async def test_a_dataset_name_with_nul_is_a_422_on_every_database(api: Api) -> None:
    response = api.client.post(
        "/v1/datasets", params={"name": "evil\x00.jsonl"}, content=jsonl_rows(QUESTION)
    )
    api.refused(response, 422, "validation-error", "NUL (U+0000)")
    assert api.stored("datasets") == []


# -- 2. cursors -------------------------------------------------------------------------------------


def cursor(*position: object) -> str:
    """A cursor as the server writes them, around any position."""
    return base64.urlsafe_b64encode(json.dumps(list(position)).encode()).decode().rstrip("=")


def raw_cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


BAD_CURSORS = [
    pytest.param(cursor("2025-01-01T00:00:00", "a"), "no timezone", id="naive"),
    pytest.param(cursor("0001-01-01T00:00:00+05:00", "a"), "out of range", id="year-1-east"),
    pytest.param(cursor("0001-01-01T00:00:00+00:00", "a"), "out of range", id="year-1"),
    pytest.param(cursor("9999-12-31T23:59:59-05:00", "a"), "out of range", id="year-9999-west"),
    pytest.param(cursor("9999-12-31T23:59:59+00:00", "a"), "out of range", id="year-9999"),
    pytest.param(cursor("yesterday", "a"), "not valid", id="not-a-time"),
    pytest.param(cursor("2025-01-01T00:00:00+00:00", 7), "not valid", id="id-not-text"),
    pytest.param(cursor("2025-01-01T00:00:00+00:00", "a\x00"), "not valid", id="id-nul"),
    pytest.param(raw_cursor('["2025-01-01T00:00:00+00:00", "\\ud800"]'), "not valid", id="id-surrogate"),
    pytest.param(cursor("2025-01-01T00:00:00+00:00"), "not valid", id="one-member"),
    pytest.param(raw_cursor("[" * 180 + "]" * 180), "not valid", id="nested"),
    pytest.param("garbage!", "not valid", id="not-base64"),
    pytest.param("w6k", "not valid", id="not-json"),
]


@pytest.mark.parametrize("collection", ["runs", "batches", "datasets"])
@pytest.mark.parametrize(("value", "reason"), BAD_CURSORS)
async def test_a_bad_cursor_is_a_400(api: Api, collection: str, value: str, reason: str) -> None:
    response = api.client.get(f"/v1/{collection}", params={"cursor": value})
    answer = api.refused(response, 400, "bad-request", reason)
    assert "next_cursor" in str(answer["detail"])


async def test_a_cursor_in_another_timezone_still_pages(api: Api) -> None:
    for n in range(3):
        assert (
            api.client.post("/v1/runs", json={"problem": {"question": f"What is {n} + 1?"}}).status_code
            == 202
        )
    first = api.client.get("/v1/runs", params={"limit": 1}).json()
    created, row_id = json.loads(base64.urlsafe_b64decode(first["next_cursor"] + "=="))
    elsewhere = datetime.fromisoformat(created).astimezone(timezone(timedelta(hours=-5)))
    rest = api.client.get("/v1/runs", params={"cursor": cursor(elsewhere.isoformat(), row_id)})
    assert rest.status_code == 200 and len(rest.json()["items"]) == 2


# -- 3. dataset rows the JSON parser refuses ---------------------------------------------------------


def jsonl_rows(*rows: str) -> bytes:
    """JSONL from rows given as objects' questions, or as raw lines when they start with '{' or '['."""
    lines = [row if row[:1] in "{[" else json.dumps({"question": row}) for row in rows]
    return ("\n".join(lines) + "\n").encode()


DEEP = "[" * 50_000 + "]" * 50_000
HUGE_INT = '{"question": "How many?", "id": ' + "9" * 5_000 + "}"
HOSTILE_ROWS = jsonl_rows(
    QUESTION,
    DEEP,
    HUGE_INT,
    '{"question": "How many?", "metadata": {"a": ' + "[" * 900 + "]" * 900 + "}}",
    '{"question": "How many \\ud800?"}',
    '{"question": "How many?", "metadata": {"k\\u0000": "v"}}',
    "What is 2 + 2?",
)


def test_deep_and_huge_rows_are_bad_rows_with_their_line() -> None:
    parsed = parse_dataset(HOSTILE_ROWS, "x.jsonl")
    assert [row.line for row in parsed.rows] == [1, 7]
    messages = {error.line: error.message for error in parsed.errors}
    assert sorted(messages) == [2, 3, 4, 5, 6]
    assert "nested too deeply" in messages[2] and "nested too deeply" in messages[4]
    assert "4300 digits" in messages[3]
    assert "lone surrogate (U+D800)" in messages[5] and "NUL (U+0000)" in messages[6]


def test_a_line_separator_inside_a_jsonl_row_is_text() -> None:
    parsed = parse_dataset(jsonl_rows(f"{QUESTION}\u2028Say why.", "What is 2 + 2?"), "x.jsonl")
    assert parsed.errors == [] and parsed.rows[0].question == f"{QUESTION}\u2028Say why."


def test_a_csv_field_over_the_reader_limit_is_refused_with_its_line() -> None:
    data = f'question\n{QUESTION}\n"{"x" * 200_000}"\n'.encode()
    with pytest.raises(DatasetError, match="line 3"):
        parse_dataset(data, "x.csv")


def test_a_nul_in_a_csv_row_is_a_bad_row() -> None:
    parsed = parse_dataset(f"question,grade\n{QUESTION},4\nHow many?,\x00\n".encode(), "x.csv")
    assert [row.line for row in parsed.rows] == [2]
    assert [(e.line, "NUL (U+0000)" in e.message) for e in parsed.errors] == [(3, True)]


async def test_an_upload_with_hostile_rows_lists_them_and_stores_nothing(api: Api) -> None:
    response = api.client.post("/v1/datasets", params={"name": "hostile.jsonl"}, content=HOSTILE_ROWS)
    answer = api.refused(response, 422, "validation-error", "nested too deeply", "4300 digits")
    assert [issue["line"] for issue in answer["row_errors"]] == [2, 3, 4, 5, 6]  # type: ignore[attr-defined]
    assert api.stored("datasets") == []


def test_validate_command_reports_hostile_rows(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(HOSTILE_ROWS)
    result = CliRunner().invoke(cli, ["datasets", "validate", str(path)])
    assert result.exit_code == 1, result.output
    assert f"{path}:2: error: " in result.output and f"{path}:3: error: " in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            '{"problem": {"question": "q", "metadata": {"a": ' + "[" * 20_000 + "]" * 20_000 + "}}}",
            "too deeply",
        ),
        ('{"problem": {"question": "q"}, "options": {"max_rounds": ' + "9" * 5_000 + "}}", "4300 digits"),
    ],
    ids=["nested", "huge-int"],
)
async def test_a_json_body_the_parser_refuses_is_a_400(api: Api, body: str, reason: str) -> None:
    api.refused(post_json(api, "/v1/runs", body), 400, "malformed-json", "cannot be read as JSON", reason)
    assert api.stored("runs") == []


# -- 4. media types ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/v1/runs", "text/plain"),
        ("/v1/runs", "application/x-www-form-urlencoded"),
        ("/v1/runs", "text/json"),
        ("/v1/batches", "text/plain; charset=utf-8"),
    ],
)
async def test_a_json_endpoint_refuses_other_media_types_with_415(
    api: Api, path: str, content_type: str
) -> None:
    body = json.dumps({"problem": PROBLEM} if path == "/v1/runs" else {"dataset_id": "x", "models": ["m"]})
    api.refused(post_json(api, path, body, content_type), 415, "unsupported-media-type", "application/json")
    assert api.stored(path.removeprefix("/v1/")) == []


async def test_json_with_a_charset_and_json_suffixes_are_accepted(api: Api) -> None:
    body = json.dumps({"problem": {"question": QUESTION}})
    for content_type in ("application/json; charset=utf-8", "application/problem+json"):
        assert post_json(api, "/v1/runs", body, content_type).status_code == 202


async def test_dataset_uploads_keep_their_media_types(api: Api) -> None:
    for n, content_type in enumerate(("text/plain", "application/x-ndjson", "application/octet-stream")):
        response = api.client.post(
            "/v1/datasets",
            params={"name": f"set{n}.jsonl"},
            content=jsonl_rows(f"What is {n} + 1?"),
            headers={"Content-Type": content_type},
        )
        assert response.status_code == 201, response.text


# -- 5. one problem type for a body over the limit ----------------------------------------------------


def over_the_limit() -> Iterator[bytes]:
    """A body sent without Content-Length, passing the 64 KiB limit while it streams in."""
    for _ in range(10):
        yield b"z" * 10_000


@pytest.mark.parametrize("how", ["declared", "streamed"])
async def test_a_body_over_the_limit_is_one_413_problem(api: Api, how: str) -> None:
    content = b"y" * 70_000 if how == "declared" else over_the_limit()
    response = api.client.post("/v1/runs", content=content, headers={"Content-Type": "application/json"})
    answer = api.refused(response, 413, "payload-too-large", "65536 bytes")
    assert answer["title"] == "Request body too large"
    assert api.stored("runs") == []


# -- 6. numbers past the database's integers -----------------------------------------------------------

LARGEST = 2**31 - 1  # what PostgreSQL's INTEGER holds
PAST_INT64 = str(2**63)  # past even SQLite's INTEGER


def a_batch(api: Api) -> str:
    """A batch of one item, over a dataset of one problem; its id."""
    dataset = api.client.post("/v1/datasets", params={"name": "one.jsonl"}, content=jsonl_rows(QUESTION))
    assert dataset.status_code == 201, dataset.text
    batch = api.client.post("/v1/batches", json={"dataset_id": dataset.json()["id"], "models": ["sim"]})
    assert batch.status_code == 202, batch.text
    return str(batch.json()["id"])


@pytest.mark.parametrize("value", ["²", "1²", str(LARGEST + 1), PAST_INT64, "9" * 30, "-1", " 1"])
async def test_a_batch_items_cursor_that_is_no_position_is_a_400(api: Api, value: str) -> None:
    batch_id = a_batch(api)
    response = api.client.get(f"/v1/batches/{batch_id}/items", params={"cursor": value})
    answer = api.refused(response, 400, "bad-request", "The cursor", "next_cursor")
    assert str(LARGEST) in str(answer["detail"])


async def test_the_largest_batch_items_cursor_is_an_empty_page(api: Api) -> None:
    batch_id = a_batch(api)
    response = api.client.get(f"/v1/batches/{batch_id}/items", params={"cursor": str(LARGEST)})
    assert response.status_code == 200 and response.json() == {"items": [], "next_cursor": None}


@pytest.mark.parametrize("value", ["99999999999999999999999", PAST_INT64, "²", "x"])
async def test_a_last_event_id_past_any_event_is_a_400_before_the_stream(api: Api, value: str) -> None:
    run = api.client.post("/v1/runs", json={"problem": {"question": QUESTION}})
    assert run.status_code == 202, run.text
    resume = {b"Last-Event-ID": value.encode("latin-1")}  # a header is Latin-1: "²" is one byte
    response = api.client.get(f"/v1/runs/{run.json()['id']}/events", headers=resume)
    api.refused(response, 400, "bad-request", "Last-Event-ID")
    # The run ends before the server stops: a stop then has no run to hand back (a SQLite stop with a
    # run in flight once waited out the 30 s busy timeout here, since fixed: test_sqlite_cancel.py).
    for _ in range(600):  # a hang guard, not a timing check
        if api.client.get(f"/v1/runs/{run.json()['id']}").json()["status"] in RUN_TERMINAL:
            break
        await asyncio.sleep(0.1)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("budget_tokens", 10**29),
        ("budget_tokens", 2**63),
        ("budget_tokens", LARGEST + 1),
        ("budget_usd", 1e300),
    ],
)
async def test_a_budget_past_any_spend_is_a_422(api: Api, field: str, value: float) -> None:
    dataset = api.client.post("/v1/datasets", params={"name": "one.jsonl"}, content=jsonl_rows(QUESTION))
    body = {"dataset_id": dataset.json()["id"], "models": ["sim"], field: value}
    answer = api.refused(api.client.post("/v1/batches", json=body), 422, "validation-error", field)
    assert "less than or equal" in str(answer["detail"])
    assert api.stored("batches") == []


# -- 7. NUL and lone surrogates in the admin and webhook APIs, alike on every database ------------------


@pytest.fixture
def admin(live: tuple[LiveServer, Keys]) -> dict[str, str]:
    """Headers of the operator key (it makes projects)."""
    return live[1].auth("operator")


UNSTORABLE_NAMES = [
    pytest.param(NUL, "NUL (U+0000)", id="nul"),
    pytest.param(LONE_SURROGATE, "lone surrogate (U+D800)", id="surrogate"),
]


@pytest.mark.parametrize(("escape", "reason"), UNSTORABLE_NAMES)
async def test_a_project_name_that_cannot_be_stored_is_a_422(
    api: Api, admin: dict[str, str], escape: str, reason: str
) -> None:
    body = f'{{"name": "north{escape}"}}'
    response = api.client.post(
        "/v1/projects", content=body, headers=admin | {"Content-Type": "application/json"}
    )
    answer = api.refused(response, 422, "validation-error", reason)
    assert str(answer["detail"]).startswith("The request does not match the schema: body.name: ")
    names = [p["name"] for p in api.client.get("/v1/projects", headers=admin).json()["items"]]
    assert not any(name.startswith("north") for name in names)


@pytest.mark.parametrize(("escape", "reason"), UNSTORABLE_NAMES)
async def test_a_key_name_that_cannot_be_stored_is_a_422(
    api: Api, admin: dict[str, str], escape: str, reason: str
) -> None:
    project = api.client.post("/v1/projects", json={"name": "north"}, headers=admin).json()["id"]
    body = f'{{"name": "app{escape}"}}'
    headers = admin | {"Content-Type": "application/json"}
    response = api.client.post(f"/v1/projects/{project}/keys", content=body, headers=headers)
    answer = api.refused(response, 422, "validation-error", reason)
    assert str(answer["detail"]).startswith("The request does not match the schema: body.name: ")
    assert api.client.get(f"/v1/projects/{project}/keys", headers=admin).json()["items"] == []


@pytest.mark.parametrize(("escape", "reason"), UNSTORABLE_NAMES)
async def test_a_webhook_description_that_cannot_be_stored_is_a_422(
    api: Api, escape: str, reason: str
) -> None:
    body = f'{{"url": "http://127.0.0.1:9/hooks", "description": "grader{escape}"}}'
    answer = api.refused(post_json(api, "/v1/webhook-endpoints", body), 422, "validation-error", reason)
    assert str(answer["detail"]).startswith("The request does not match the schema: body.description: ")
    assert api.client.get("/v1/webhook-endpoints").json()["items"] == []


async def test_a_key_expiring_past_any_time_we_keep_is_a_422(api: Api, admin: dict[str, str]) -> None:
    project = api.client.post("/v1/projects", json={"name": "north"}, headers=admin).json()["id"]
    body = {"name": "app", "expires_at": "9999-12-31T23:59:59-05:00"}
    response = api.client.post(f"/v1/projects/{project}/keys", json=body, headers=admin)
    api.refused(response, 422, "validation-error", "body.expires_at", "between 1970 and 9000")


ID_WITH_NUL = "abc%00def"
PATHS_WITH_AN_ID = [
    pytest.param("GET", f"/v1/webhook-endpoints/{ID_WITH_NUL}", "both", id="endpoint"),
    pytest.param("DELETE", f"/v1/webhook-endpoints/{ID_WITH_NUL}", "both", id="endpoint-delete"),
    pytest.param("POST", f"/v1/webhook-endpoints/{ID_WITH_NUL}/test", "both", id="endpoint-test"),
    pytest.param("GET", f"/v1/webhook-endpoints/{ID_WITH_NUL}/deliveries", "both", id="endpoint-log"),
    pytest.param("POST", f"/v1/webhook-endpoints/{ID_WITH_NUL}/rotate-secret", "both", id="endpoint-rotate"),
    pytest.param("GET", f"/v1/projects/{ID_WITH_NUL}/keys", "admin", id="keys"),
    pytest.param("POST", f"/v1/keys/{ID_WITH_NUL}/revoke", "admin", id="revoke"),
    pytest.param("GET", f"/v1/projects/{ID_WITH_NUL}/webhook-secret", "admin", id="webhook-secret"),
    pytest.param("POST", f"/v1/projects/{ID_WITH_NUL}/webhook-secret/rotate", "admin", id="rotate"),
    pytest.param("GET", f"/v1/runs/{ID_WITH_NUL}/deliveries", "both", id="run-log"),
    pytest.param("POST", f"/v1/runs/{ID_WITH_NUL}/deliveries/redeliver", "both", id="run-redeliver"),
]


@pytest.mark.parametrize(("method", "path", "key"), PATHS_WITH_AN_ID)
async def test_an_id_with_nul_in_the_path_is_unknown_on_every_database(
    api: Api, live: tuple[LiveServer, Keys], method: str, path: str, key: str
) -> None:
    response = api.client.request(method, path, headers=live[1].auth(key))
    api.refused(response, 404, "not-found", "There is no")


async def test_an_id_with_nul_in_a_new_key_path_is_unknown(api: Api, admin: dict[str, str]) -> None:
    response = api.client.post(f"/v1/projects/{ID_WITH_NUL}/keys", json={"name": "app"}, headers=admin)
    api.refused(response, 404, "not-found", "There is no project")


@pytest.mark.parametrize("field", ["project_id", "action", "target_id"])
async def test_an_audit_filter_with_nul_is_a_422(api: Api, admin: dict[str, str], field: str) -> None:
    response = api.client.get("/v1/audit", params={field: "a\x00b"}, headers=admin)
    api.refused(response, 422, "validation-error", f"query.{field}", "NUL (U+0000)")
