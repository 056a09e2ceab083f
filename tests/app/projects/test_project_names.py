"""Project names people can tell apart: NFKC-normalised, no invisible characters, no letters of
mixed scripts (look-alikes of another name)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.projects.names import project_name
from tests.helpers.service import Service, assert_problem

LOOK_ALIKES = [
    pytest.param("s\u0441hool-north", "mixed", id="cyrillic-es"),
    pytest.param("sch\u03bfol-north", "mixed", id="greek-omicron"),
    pytest.param("school\u200b-north", "U+200B", id="zero-width-space"),
    pytest.param("school-\u200dnorth", "U+200D", id="zero-width-joiner"),
    pytest.param("\u202eschool-north", "U+202E", id="right-to-left-override"),
    pytest.param("school-north\u2066", "U+2066", id="left-to-right-isolate"),
    pytest.param("school\u00ad-north", "U+00AD", id="soft-hyphen"),
    pytest.param("school-north\ufe0f", "U+FE0F", id="variation-selector"),
    pytest.param("school\u3164north", "U+1160", id="hangul-filler"),
    pytest.param("\ufeffschool", "U+FEFF", id="byte-order-mark"),
]


@pytest.mark.parametrize(("name", "said"), LOOK_ALIKES)
def test_invisible_and_mixed_script_names_are_refused(name: str, said: str) -> None:
    with pytest.raises(ValueError, match=re.escape(said)):
        project_name(name)


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        ("\uff53\uff43\uff48\uff4f\uff4f\uff4c-north", "school-north"),  # full-width
        ("\U0001d42cchool-north", "school-north"),  # mathematical bold
        ("e\u0301cole du nord", "\u00e9cole du nord"),  # composed
        ("\u041c\u043e\u0441\u043a\u0432\u0430-1", "\u041c\u043e\u0441\u043a\u0432\u0430-1"),  # one script
        (
            "\u6771\u4eac-\u3072\u304c\u3057-school",
            "\u6771\u4eac-\u3072\u304c\u3057-school",
        ),  # Japanese + Latin
        ("\ud55c\uad6d-Seoul", "\ud55c\uad6d-Seoul"),  # Korean + Latin
    ],
)
def test_names_are_nfkc_normalised_and_one_scripts_or_cjks_mixtures_are_taken(name: str, stored: str) -> None:
    assert project_name(name) == stored


@pytest.mark.parametrize(("name", "said"), LOOK_ALIKES[:5])
async def test_the_api_refuses_a_look_alike_name_with_a_422(service: Service, name: str, said: str) -> None:
    operator = service.keys.auth("operator")
    response = await service.client.post("/v1/projects", json={"name": name}, headers=operator)
    assert said in str(assert_problem(response, 422)["detail"])
    names = [p["name"] for p in (await service.client.get("/v1/projects", headers=operator)).json()["items"]]
    assert not any("north" in n for n in names)


async def test_a_name_that_normalises_to_a_taken_one_is_a_409(service: Service) -> None:
    operator = service.keys.auth("operator")
    made = await service.client.post("/v1/projects", json={"name": "school-north"}, headers=operator)
    assert made.status_code == 201
    wide = await service.client.post(
        "/v1/projects", json={"name": "\uff53\uff43\uff48\uff4f\uff4f\uff4c-north"}, headers=operator
    )
    assert_problem(wide, 409)


def test_the_cli_refuses_a_look_alike_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKLOOP_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'names.db'}")
    runner = CliRunner()
    refused = runner.invoke(cli, ["projects", "create", "school\u200b-north"])
    assert refused.exit_code == 2 and "U+200B" in refused.output
    made = runner.invoke(cli, ["projects", "create", "\uff53\uff43\uff48\uff4f\uff4f\uff4c"])
    assert made.exit_code == 0 and made.output.strip().endswith("\tschool")
    found = runner.invoke(
        cli, ["keys", "create", "--name", "app", "--project", "\uff53\uff43\uff48\uff4f\uff4f\uff4c"]
    )
    assert found.exit_code == 0, found.output
