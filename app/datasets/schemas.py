"""HTTP schemas of the datasets API."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DatasetFormat = Literal["jsonl", "csv", "think-csv"]


class RowIssue(BaseModel):
    """A row of the uploaded file, by its first line, and what is wrong with it."""

    line: int = Field(description="The row's first line in the uploaded file (1-based)")
    message: str = Field(description="What is wrong with it, or what it duplicates")


_EXAMPLE_DATASET: dict[str, Any] = {
    "id": "6fd4be5b0c7e4b1f9a2d3c4e5f6a7b8c",
    "name": "flawed-problems.jsonl",
    "format": "jsonl",
    "n_problems": 12,
    "created_at": "2026-11-23T09:00:00Z",
    "duplicates": [{"line": 14, "message": "the same problem as line 3"}],
    "warnings": [],
}


class DatasetPublic(BaseModel):
    """A registered problem set; an upload's answer also lists folded duplicates and warnings."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE_DATASET]})

    id: str = Field(description="Dataset id")
    name: str = Field(description="The name it was uploaded with")
    format: DatasetFormat = Field(description="How it was read: jsonl, csv or think-csv")
    n_problems: int = Field(description="Problems stored (duplicates kept once)")
    created_at: datetime = Field(description="When it was uploaded (UTC)")
    duplicates: list[RowIssue] = Field(
        default_factory=list,
        description="Rows folded into an earlier identical row (upload answer and reads alike)",
    )
    warnings: list[RowIssue] = Field(
        default_factory=list, description="Rows stored but suspicious (e.g. a solution that states no number)"
    )


class DatasetPage(BaseModel):
    """A page of datasets; pass ``next_cursor`` as ``cursor`` for the next one."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "items": [_EXAMPLE_DATASET],
                    "next_cursor": "WyIyMDI2LTExLTIzVDA5OjAwOjAwKzAwOjAwIiwgIjZmZDRiZTViIl0",
                }
            ]
        }
    )

    items: list[DatasetPublic] = Field(description="Datasets, newest first")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null on the last page")
