"""HTTP schemas of the datasets API."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

DatasetFormat = Literal["jsonl", "csv", "think-csv"]


class RowIssue(BaseModel):
    """A row of the uploaded file, by its first line, and what is wrong with it."""

    line: int
    message: str


class DatasetPublic(BaseModel):
    """A registered problem set; an upload's answer also lists folded duplicates and warnings."""

    id: str
    name: str
    format: DatasetFormat
    n_problems: int
    created_at: datetime
    duplicates: list[RowIssue] = []
    warnings: list[RowIssue] = []


class DatasetPage(BaseModel):
    """A page of datasets; pass ``next_cursor`` as ``cursor`` for the next one."""

    items: list[DatasetPublic]
    next_cursor: str | None
