"""/v1/datasets: upload (validated row by row) and read problem sets."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response, status
from pydantic import AfterValidator
from sqlmodel import col, select

from app import audit
from app.datasets import repository as datasets_repo
from app.datasets.parsing import MAX_DATASET_BYTES, DatasetError, ParsedDataset, listed, parse_dataset
from app.datasets.schemas import DatasetFormat, DatasetPage, DatasetPublic
from app.deps import ReadKey, Session, WriteKey
from app.errors import Conflict, NotFound, Unprocessable, problem_responses
from app.models import Dataset
from app.pagination import created_between, page
from app.pagination_http import CreatedAfter, CreatedBefore
from app.runs import repository as runs_repo
from app.text import storable, unstorable_reason

router = APIRouter(prefix="/v1/datasets", tags=["datasets"])
DatasetId = Annotated[str, Path(description="The dataset's id")]
_ERRORS = problem_responses(
    {404: "No such dataset", 409: "Batches use it", 413: "File too large", 422: "Bad rows or file"}
)


def _format(content_type: str, name: str, fmt: DatasetFormat | None) -> tuple[str, DatasetFormat | None]:
    """A file name for format detection, and the format when the request says it."""
    if fmt is not None:
        return name, fmt
    if "ndjson" in content_type or "jsonl" in content_type or "json-lines" in content_type:
        return name, "jsonl"
    if "csv" in content_type and not name.endswith(".csv"):
        return f"{name}.csv", None  # CSV or the THiNK layout, told apart by the header
    return name, None


def _parse(data: bytes, filename: str, fmt: DatasetFormat | None) -> ParsedDataset:
    try:
        parsed = parse_dataset(data, filename, fmt)
    except DatasetError as exc:
        raise Unprocessable(f"The file cannot be read: {exc}.") from exc
    if parsed.errors:
        raise Unprocessable(
            f"{len(parsed.errors)} row(s) are invalid; nothing was stored. Fix them and upload again.",
            error_count=len(parsed.errors),
            row_errors=listed(parsed.errors),
        )
    if not parsed.rows:
        raise Unprocessable("The file holds no problems.")
    return parsed


def _public(dataset: Dataset) -> DatasetPublic:
    """The dataset as uploads and reads answer it (none kept: uploaded before they were)."""
    issues = {"duplicates": dataset.duplicates or [], "warnings": dataset.warnings or []}
    return DatasetPublic.model_validate(dataset.model_dump() | issues)


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=DatasetPublic,
    responses=_ERRORS,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                media: {"schema": {"type": "string", "format": "binary"}}
                for media in ("application/x-ndjson", "text/csv", "application/octet-stream")
            },
        }
    },
)
async def upload_dataset(
    request: Request,
    session: Session,
    key: WriteKey,
    response: Response,
    name: Annotated[
        str,
        Query(min_length=1, max_length=200, description="A name; its extension may tell the format"),
        AfterValidator(storable),
    ],
    fmt: Annotated[
        DatasetFormat | None, Query(alias="format", description="Override format detection")
    ] = None,
) -> DatasetPublic:
    """Register a problem set sent as the raw body (JSONL, CSV or the THiNK layout, up to 10 MiB).

    Every row is validated; if any is bad, nothing is stored and the answer lists them by line.
    Duplicates are kept once and listed; suspicious rows are stored and listed as warnings.
    """
    filename, chosen = _format(request.headers.get("content-type", ""), name, fmt)
    parsed = _parse(await request.body(), filename, chosen)
    dataset = await datasets_repo.store_dataset(session, name, parsed, project_id=key.project_id)
    detail = {"name": name, "problems": dataset.n_problems}
    audit.record(session, key, "created", "dataset", dataset.id, key.project_id, detail)
    await session.commit()
    response.headers["Location"] = f"/v1/datasets/{dataset.id}"
    return _public(dataset)


async def _get(session: Session, dataset_id: str, project_id: str) -> Dataset:
    """The project's dataset; 404 for an unknown id and for another project's dataset alike."""
    dataset = None if unstorable_reason(dataset_id) else await session.get(Dataset, dataset_id)
    if dataset is None or dataset.project_id != project_id:
        raise NotFound(f"There is no dataset {dataset_id}.")
    return dataset


@router.get("/{dataset_id}", response_model=DatasetPublic, responses=_ERRORS)
async def get_dataset(dataset_id: DatasetId, session: Session, key: ReadKey) -> DatasetPublic:
    """A registered problem set."""
    return _public(await _get(session, dataset_id, key.project_id))


@router.delete(
    "/{dataset_id}", status_code=status.HTTP_204_NO_CONTENT, response_class=Response, responses=_ERRORS
)
async def delete_dataset(dataset_id: DatasetId, session: Session, key: WriteKey) -> Response:
    """Delete a problem set with its rows and their metadata, and the problems nothing else refers
    to; 409 while batches evaluate it (delete them first)."""
    await _get(session, dataset_id, key.project_id)
    try:
        problems = await datasets_repo.delete_dataset(session, dataset_id)
    except datasets_repo.DatasetInUse as exc:
        raise Conflict(f"Batches evaluate this dataset ({exc}): delete them first.") from exc
    await runs_repo.delete_orphan_problems(session, problems)
    audit.record(session, key, "deleted", "dataset", dataset_id, key.project_id)
    await session.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("", response_model=DatasetPage, responses=_ERRORS)
async def list_datasets(
    session: Session,
    key: ReadKey,
    limit: Annotated[int, Query(ge=1, le=100, description="At most this many problem sets")] = 20,
    cursor: Annotated[
        str | None, Query(max_length=500, description="next_cursor of the previous page")
    ] = None,
    created_after: CreatedAfter = None,
    created_before: CreatedBefore = None,
) -> DatasetPage:
    """The project's problem sets, newest first; filtered by creation time, paged with ``cursor``."""
    query = select(Dataset).where(col(Dataset.project_id) == key.project_id)
    query = created_between(query, Dataset, created_after, created_before)
    rows, next_cursor = await page(session, query, Dataset, limit, cursor)
    return DatasetPage(items=[_public(d) for d in rows], next_cursor=next_cursor)


UPLOAD_LIMITS = {"/v1/datasets": MAX_DATASET_BYTES}
