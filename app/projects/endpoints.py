"""/v1/projects and /v1/keys: the admin API.

An **operator** key is the instance's: it makes projects, sets their daily caps, and manages every
project's keys and audit log. A project's **admin** key manages its own project only — its keys,
its required warrant, its audit log — and gets 404 for another project's, as every key does for
another project's runs: one tenant's admin can neither mint a key in another project nor read it.
Neither scope reads or writes runs, datasets or batches by itself."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response, status
from pydantic import AfterValidator

from app import audit
from app.deps import OPERATOR, AdminKey, AppSettings, OperatorKey, Session
from app.errors import Conflict, Forbidden, NotFound, Unprocessable, problem_responses
from app.models import ApiKey, Project, new_webhook_secret, utcnow
from app.projects import keys
from app.projects.schemas import (
    AuditEntry,
    AuditPage,
    KeyCreate,
    KeyCreated,
    KeyList,
    KeyPublic,
    ProjectCreate,
    ProjectList,
    ProjectPublic,
    ProjectUpdate,
    WebhookSecret,
)
from app.text import storable_if_text, unstorable_reason
from app.webhooks.outbox import previous_until, project_secret
from app.webhooks.signing import standard_secret

router = APIRouter(tags=["admin"])
KeyId = Annotated[str, Path(description="The key's id (not its secret)")]
ProjectId = Annotated[str, Path(description="The project's id")]
KeepPrevious = Annotated[
    float | None,
    Query(
        ge=0,
        le=30 * 86400,
        description="Seconds the replaced secret keeps signing beside the new one (default "
        "THINKLOOP_WEBHOOK_ROTATION_S); 0 ends it at once (a leaked secret)",
    ),
]
_STORABLE = AfterValidator(storable_if_text)  # a filter with NUL: 422 on every database, by name
_ERRORS = problem_responses(
    {
        403: "The key lacks the admin scope, or the operator scope this needs",
        404: "No such project or key (or another project's, for a project's admin)",
        409: "Conflict",
        422: "Invalid request",
    }
)


def _project(project: Project) -> ProjectPublic:
    return ProjectPublic.model_validate(project.model_dump())


def key_public(key: ApiKey) -> KeyPublic:
    """A key as the API lists it."""
    return KeyPublic.model_validate(key.model_dump(exclude={"key_hash"}))


def _operator(key: ApiKey) -> bool:
    return OPERATOR in key.scopes


def _own(key: ApiKey, project_id: str) -> bool:
    """Whether ``key`` may manage the project: an operator any, a project's admin its own."""
    return _operator(key) or key.project_id == project_id


async def _get_project(session: Session, project_id: str, key: ApiKey) -> Project:
    """A project ``key`` may manage; 404 for an unknown one and for another project's (to a
    project's admin) alike, so ids reveal nothing across projects."""
    # No id holds NUL (PostgreSQL would refuse to look): unknown on every database alike.
    unknown = unstorable_reason(project_id) is not None or not _own(key, project_id)
    project = None if unknown else await session.get(Project, project_id)
    if project is None:
        raise NotFound(f"There is no project {project_id}.")
    return project


@router.post(
    "/v1/projects", status_code=status.HTTP_201_CREATED, response_model=ProjectPublic, responses=_ERRORS
)
async def create_project(
    body: ProjectCreate, session: Session, admin: OperatorKey, response: Response
) -> ProjectPublic:
    """Create a project (a tenant), with its own daily caps, required warrant and guarantee target
    (guarantee_alpha and guarantee_delta: both or neither) if given; 409 if the name is taken. An
    **operator** key's."""
    try:
        project = await keys.create_project(session, body.name, body.daily_tokens, body.daily_cost_usd)
    except keys.ProjectError as exc:
        raise Conflict(f"{str(exc).capitalize()}.") from exc
    project.require_warrant = body.require_warrant
    project.require_specificity = body.require_specificity
    project.require_warrant_source = body.require_warrant_source
    project.require_warrant_min_flawed = body.require_warrant_min_flawed
    project.audit_rate = body.audit_rate
    project.guarantee_alpha, project.guarantee_delta = body.guarantee_alpha, body.guarantee_delta
    detail = body.model_dump(exclude_none=True) | {"name": project.name}
    audit.record(session, admin, "created", "project", project.id, project.id, detail)
    await session.commit()
    response.headers["Location"] = f"/v1/projects/{project.id}"
    return _project(project)


@router.get("/v1/projects", response_model=ProjectList, responses=_ERRORS)
async def list_projects(session: Session, admin: AdminKey) -> ProjectList:
    """Every project, oldest first (to an operator); a project's admin sees its own."""
    found = await keys.list_projects(session)
    return ProjectList(items=[_project(p) for p in found if _own(admin, p.id)])


@router.patch("/v1/projects/{project_id}", response_model=ProjectPublic, responses=_ERRORS)
async def update_project(
    project_id: ProjectId, body: ProjectUpdate, session: Session, admin: AdminKey
) -> ProjectPublic:
    """Change a project's own daily caps, required warrant or guarantee target: the fields sent change
    (null: back to the global setting), the others stay; checked from the next run or batch on. A
    project's admin may change its own project's required warrant; daily caps are the operator's to
    set (403). A change that would leave half a guarantee target (guarantee_alpha without
    guarantee_delta, or the reverse) is refused with 422 and nothing changes."""
    project = await _get_project(session, project_id, admin)
    changes = body.model_dump(include=body.model_fields_set)
    capped = sorted({"daily_tokens", "daily_cost_usd"} & set(changes))
    if capped and not _operator(admin):
        raise Forbidden(f"Only an operator key sets a project's daily caps ({', '.join(capped)}).")
    _whole_target(project, changes)
    for name, value in changes.items():
        setattr(project, name, value)
    if changes:
        audit.record(session, admin, "updated", "project", project.id, project.id, changes)
    await session.commit()
    await session.refresh(project)
    return _project(project)


def _whole_target(project: Project, changes: dict[str, object]) -> None:
    """422 (nothing changed) when the change would leave half a guarantee target: alpha without
    delta or delta without alpha, counting the field not sent at its stored value."""
    alpha = changes.get("guarantee_alpha", project.guarantee_alpha)
    delta = changes.get("guarantee_delta", project.guarantee_delta)
    if (alpha is None) != (delta is None):
        raise Unprocessable(
            "A guarantee target is guarantee_alpha and guarantee_delta together: this change would "
            f"leave {'guarantee_alpha' if alpha is not None else 'guarantee_delta'} alone. Send both "
            "(or both null to lift the target).",
            guarantee_alpha=alpha,
            guarantee_delta=delta,
        )


def _project_secret_in_use(settings: AppSettings) -> bool:
    """Whether the project's secret signs runs' webhooks (THINKLOOP_WEBHOOK_SECRET unset or empty)."""
    return not (settings.webhook_secret and settings.webhook_secret.get_secret_value())


@router.get("/v1/projects/{project_id}/webhook-secret", response_model=WebhookSecret, responses=_ERRORS)
async def read_webhook_secret(
    project_id: ProjectId, session: Session, admin: AdminKey, settings: AppSettings
) -> WebhookSecret:
    """The project's webhook signing secret (its admin's, or an operator's to read): the key that
    signs its runs' own ``webhook_url`` deliveries."""
    project = await _get_project(session, project_id, admin)
    secret = await project_secret(session, project_id)
    await session.commit()
    assert secret is not None
    return _secret_public(project, secret, settings)


def _secret_public(project: Project, secret: str, settings: AppSettings) -> WebhookSecret:
    until = project.webhook_secret_previous_until
    signing = project.webhook_secret_previous is not None and until is not None and until > utcnow()
    return WebhookSecret(
        project_id=project.id,
        secret=standard_secret(secret),  # a secret of an earlier release, in the form libraries take
        in_use=_project_secret_in_use(settings),
        previous_until=until if signing else None,
    )


@router.post(
    "/v1/projects/{project_id}/webhook-secret/rotate", response_model=WebhookSecret, responses=_ERRORS
)
async def rotate_webhook_secret(
    project_id: ProjectId,
    session: Session,
    admin: AdminKey,
    settings: AppSettings,
    keep_previous_s: KeepPrevious = None,
) -> WebhookSecret:
    """Replace the project's webhook signing secret with a new one (in this answer): every attempt
    from now on is signed with it, retries of earlier deliveries included, and with the old one too
    until ``previous_until``, so receivers can switch without dropping a delivery."""
    project = await _get_project(session, project_id, admin)
    project.webhook_secret_previous = project.webhook_secret
    project.webhook_secret_previous_until = previous_until(settings, keep_previous_s, utcnow())
    project.webhook_secret = new_webhook_secret()
    audit.record(session, admin, "rotated", "webhook-secret", project.id, project.id)
    await session.commit()
    return _secret_public(project, project.webhook_secret, settings)


@router.post(
    "/v1/projects/{project_id}/keys",
    status_code=status.HTTP_201_CREATED,
    response_model=KeyCreated,
    responses=_ERRORS,
)
async def create_key(project_id: ProjectId, body: KeyCreate, session: Session, admin: AdminKey) -> KeyCreated:
    """Create a key of the project; its secret is in this response and never again. A project's
    admin makes keys of its own project; only an operator key grants the operator scope (403)."""
    await _get_project(session, project_id, admin)
    if OPERATOR in body.scopes and not _operator(admin):
        raise Forbidden("Only an operator key creates operator keys.")
    try:
        made = await keys.create_key(session, body.name, list(body.scopes), project_id, body.expires_at)
    except ValueError as exc:
        raise Unprocessable(f"{str(exc).capitalize()}.") from exc
    audit.record(session, admin, "created", "key", made.id, project_id, {"scopes": made.scopes})
    await session.commit()
    row = await session.get(ApiKey, made.id)
    assert row is not None
    return KeyCreated(**key_public(row).model_dump(), secret=made.secret)


@router.get("/v1/projects/{project_id}/keys", response_model=KeyList, responses=_ERRORS)
async def list_keys(project_id: ProjectId, session: Session, admin: AdminKey) -> KeyList:
    """The project's keys with their scopes, expiry and last use; never a secret."""
    await _get_project(session, project_id, admin)
    return KeyList(items=[key_public(k) for k in await keys.list_keys(session, project_id)])


@router.post("/v1/keys/{key_id}/revoke", response_model=KeyPublic, responses=_ERRORS)
async def revoke_key(key_id: KeyId, session: Session, admin: AdminKey) -> KeyPublic:
    """Revoke a key of the admin's project (an operator: of any project): it stops working at once.
    Revoking twice is harmless."""
    row = None if unstorable_reason(key_id) else await session.get(ApiKey, key_id)
    if row is None or not _own(admin, row.project_id):
        raise NotFound(f"There is no key {key_id}.")
    await keys.revoke_key(session, key_id)
    audit.record(session, admin, "revoked", "key", key_id, row.project_id)
    await session.commit()
    return key_public(row)


@router.get("/v1/audit", response_model=AuditPage, responses=_ERRORS)
async def read_audit(
    session: Session,
    admin: AdminKey,
    project_id: Annotated[
        str | None, Query(max_length=64, description="Only entries of this project"), _STORABLE
    ] = None,
    action: Annotated[
        str | None,
        Query(max_length=32, description="Only this action (created, cancelled, revoked, deleted…)"),
        _STORABLE,
    ] = None,
    target_id: Annotated[
        str | None, Query(max_length=64, description="Only entries about this resource id"), _STORABLE
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200, description="At most this many entries")] = 50,
    cursor: Annotated[
        str | None, Query(max_length=500, description="next_cursor of the previous page")
    ] = None,
) -> AuditPage:
    """The audit log, newest first: who created, cancelled, steered, revoked or deleted what; a
    project's admin reads its own project's (404 for another's), an operator every project's."""
    if not _operator(admin):
        if project_id is not None and project_id != admin.project_id:
            raise NotFound(f"There is no project {project_id}.")
        project_id = admin.project_id
    rows, next_cursor = await audit.entries(
        session, project_id=project_id, action=action, target_id=target_id, limit=limit, cursor=cursor
    )
    items = [AuditEntry.model_validate(row.model_dump()) for row in rows]
    return AuditPage(items=items, next_cursor=next_cursor)
