"""The time filters of every list endpoint (runs, batches, datasets, deliveries) as FastAPI query
parameters: apart from app.pagination, so that code paging the store without a server (the CLI's
temporary store) does not import FastAPI."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Query
from pydantic import AfterValidator, AwareDatetime

from app.pagination import in_range


def _in_range_or_none(when: datetime | None) -> datetime | None:
    return None if when is None else in_range(when)


# Aware, within 1970-9000, else a 422.
CreatedAfter = Annotated[
    AwareDatetime | None,
    Query(description="Only those created at or after this time (with a timezone)"),
    AfterValidator(_in_range_or_none),
]
CreatedBefore = Annotated[
    AwareDatetime | None,
    Query(description="Only those created before this time (with a timezone)"),
    AfterValidator(_in_range_or_none),
]
