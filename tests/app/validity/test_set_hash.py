"""A labelled set's hash: the SHA-256 of its canonical JSONL, reproduced by `thinkloop datasets hash`
and by the shell pipeline docs/warrants.md gives; the reserved name of the shipped set; labels that
contradict themselves."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.labelled.canonical import canonical_hash, canonical_jsonl, file_hash
from agents.labelled.labels import LabelledItem, contradictions
from app.cli import cli
from app.validity.provenance import NotRecordable, check_set, reserved, set_name, shipped_hash, shipped_path
from app.validity.records import set_hash
from app.validity.service import builtin_set
from tests.helpers.paths import ROOT
from tests.helpers.validity import RECORDABLE

runner = CliRunner()
DOCS = ROOT / "docs" / "warrants.md"
# Keys out of order, nested objects, non-ASCII, a quote, a control character, surrounding spaces
# (stripped when an item is read, kept in its hash), a blank line and a CRLF line end.
TRICKY = (
    '{"split":"heldout","id":"é-1","kind":"control","question":"  Zoë has 3 × 4 €-coins. How much?",'
    '"solution":"3 × 4 = 12, so 12 € \\"in all\\".\\t"}\r\n'
    "\n"
    '{"id": "f", "kind": "flawed", "split": "tune", "question": "A 12-singer choir sings a 4-minute song. '
    'How long for 36?", "solution": "12 minutes.", "flaws": [{"type": "false_proportionality", '
    '"levels": ["evaluate"], "evidence": "time does not scale"}], "corrected": {"solution": "4 minutes.", '
    '"question": "A choir sings a 4-minute song. How long does it last?"}}\n'
)


def documented_pipeline() -> str:
    """The `python3 … | sha256sum` command of docs/warrants.md, with FILE where its file is."""
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(r"^python3 -c .*?\| sha256sum$", text, flags=re.S | re.M)
    assert match is not None, "docs/warrants.md gives no python3 … | sha256sum pipeline"
    return match.group(0).replace("app/samples/validity/problems.jsonl", '"$FILE"')


def pipeline_hash(path: Path) -> str:
    out = subprocess.run(
        ["bash", "-c", documented_pipeline()],
        env={"FILE": str(path), "PATH": "/usr/bin:/bin:/usr/local/bin", "LC_ALL": "C"},
        capture_output=True,
        check=True,
    )
    return out.stdout.decode().split()[0]


@pytest.mark.parametrize("which", ["shipped", "tricky"])
def test_the_cli_and_the_documented_pipeline_give_one_hash(which: str, tmp_path: Path) -> None:
    if shutil.which("python3", path="/usr/bin:/bin:/usr/local/bin") is None:
        pytest.fail("the documented pipeline needs python3 on PATH")
    path = shipped_path() if which == "shipped" else tmp_path / "tricky.jsonl"
    if which == "tricky":
        path.write_bytes(TRICKY.encode("utf-8"))
    printed = runner.invoke(cli, ["datasets", "hash", str(path)])
    assert printed.exit_code == 0, printed.output
    assert printed.stdout.strip() == pipeline_hash(path) == file_hash(path)


def test_the_canonical_form_is_defined_byte_for_byte() -> None:
    assert canonical_jsonl([{"b": [1, {"d": 1, "c": "é"}], "a": None}, {}]) == (
        '{"a":null,"b":[1,{"c":"é","d":1}]}\n{}\n'.encode()
    )
    assert canonical_hash([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # of b""


def test_the_shipped_set_hashes_the_same_as_a_file_and_as_items() -> None:
    assert shipped_hash() == file_hash(shipped_path()) == set_hash(builtin_set())
    assert set_hash([LabelledItem.model_validate(item) for item in RECORDABLE]) == canonical_hash(RECORDABLE)


def test_a_bad_file_is_one_line_and_exit_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a"}\n{not json\n', encoding="utf-8")
    result = runner.invoke(cli, ["datasets", "hash", str(bad)])
    assert result.exit_code == 1 and f"{bad}:2: invalid JSON" in result.stderr
    missing = runner.invoke(cli, ["datasets", "hash", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 1 and "cannot read" in missing.stderr


def test_the_shipped_name_is_given_by_the_hash_alone() -> None:
    assert set_name("my-copy.jsonl", shipped_hash()) == "shipped"  # the shipped set under any name
    assert set_name("district.jsonl", "ab" * 32) == "district.jsonl"
    for claimed in ("shipped", "Shipped.jsonl", " shipped.v2.jsonl"):
        assert reserved(claimed) == "shipped"
        with pytest.raises(NotRecordable, match="is reserved for the set shipped with thinkloop"):
            set_name(claimed, "ab" * 32)
    assert reserved("shipped-by-us.jsonl") is None and reserved("items") is None


def test_labels_that_contradict_themselves() -> None:
    items = [LabelledItem.model_validate(item | {"split": "heldout"}) for item in RECORDABLE]
    assert contradictions(items) == []
    flawed = RECORDABLE[0]
    # a corrected version that is another item's flawed version, spacing aside
    again = flawed | {"id": "again", "corrected": {"question": flawed["question"] + " ", "solution": "x"}}
    mixed = [*items, LabelledItem.model_validate(again | {"question": "Another question?"})]
    assert contradictions(mixed) == []  # its corrected version differs (solution "x")
    same = again | {"question": "Another question?", "corrected": {"question": flawed["question"]}}
    same["corrected"]["solution"] = "  " + flawed["solution"]
    mixed = [*items, LabelledItem.model_validate(same)]
    assert contradictions(mixed) == ["choir (flawed) = again (corrected)"]
    with pytest.raises(NotRecordable, match=r"labels contradict themselves: choir \(flawed\) = again"):
        check_set(mixed, "district", "ab" * 32)
