"""The client's own event-stream reader (thinkloop_client._sse): the frames the WHATWG format defines."""

from __future__ import annotations

from thinkloop_client._sse import Decoder, ServerSentEvent


def frames(text: str) -> list[ServerSentEvent]:
    return list(Decoder().decode(text.splitlines(keepends=True)))


def test_fields_comments_and_blank_lines_make_frames() -> None:
    text = (
        ": ping\n\n"  # a comment alone is a heartbeat, not a frame
        'id: 3\nevent: run.started\ndata: {"a":1}\n\n'
        "data:no space\ndata:  two spaces\n\n"  # one leading space is dropped, no more
        "retry: 1500\ndata: x\n\n"
        "event: batch.finished\n\n"  # a typed frame without data is still dispatched
        "data: cut off at the end"
    )
    assert frames(text) == [
        ServerSentEvent("run.started", '{"a":1}', "3"),
        ServerSentEvent("message", "no space\n two spaces", "3"),  # the last id carries on
        ServerSentEvent("message", "x", "3", 1500),
        ServerSentEvent("batch.finished", "", "3"),
    ]


def test_any_line_ending_and_junk_fields() -> None:
    text = "id: 7\r\nfoo: bar\r\nretry: soon\r\ndata: a\r\n\r\nid: bad\0id\ndata: b\n\n"
    assert frames(text) == [ServerSentEvent("message", "a", "7"), ServerSentEvent("message", "b", "7")]
