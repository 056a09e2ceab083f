"""The Python client's request building, without a server."""

from __future__ import annotations

from thinkloop_client._calls import check_model


def test_a_model_name_is_one_escaped_path_segment() -> None:
    """A registry key is free-form: '?' or '#' in it must not end the path and start a query."""
    assert check_model("local?fast#1").path == "/v1/models/local%3Ffast%231/check"
