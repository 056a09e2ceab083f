"""A typed Python client for the thinkloop API (``pip install thinkloop-client``).

    from thinkloop_client import Client

    with Client("http://127.0.0.1:8000", api_key="tlk_…") as tl:
        run = tl.create_run("A choir of 12 sings a song in 4 minutes. How long do 36 singers take?",
                            "4 × 3 = 12 minutes.", metadata={"pupil": "P-17"})
        for event in tl.stream_run(run.id):
            print(event.type)
        trace = tl.get_run(run.id)
        print(trace.status, trace.final.question if trace.final else None)

It needs httpx and pydantic only: none of the server's code.
"""

from thinkloop_client._calls import AuditFilters, BatchOptions, Page, ProjectCaps, RunFilters, RunOptions
from thinkloop_client.client import AsyncClient, Client
from thinkloop_client.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    RateLimited,
    ServerError,
    ThinkloopError,
    Unauthorized,
)
from thinkloop_client.models import (
    AuditEntry,
    Batch,
    BatchComparison,
    BatchItem,
    BatchProgress,
    CallFailure,
    Dataset,
    Delivery,
    EscalationStep,
    Event,
    JudgeVerdict,
    Key,
    ModelInfo,
    OtherEvent,
    Problem,
    Project,
    Review,
    ReviewDecision,
    ReviewDetail,
    ReviserThinking,
    RevisionProposed,
    Round,
    RoundEscalated,
    RoundScored,
    RoundStarted,
    Run,
    RunFailed,
    RunFinished,
    RunResumed,
    RunStarted,
    RunTrace,
    Verdict,
    Version,
    WaitingItems,
    WebhookEndpoint,
)

__all__ = [
    "AsyncClient",
    "AuditEntry",
    "AuditFilters",
    "Batch",
    "BatchComparison",
    "BatchItem",
    "BatchOptions",
    "BatchProgress",
    "CallFailure",
    "Client",
    "Conflict",
    "Dataset",
    "Delivery",
    "EscalationStep",
    "Event",
    "Forbidden",
    "InvalidRequest",
    "JudgeVerdict",
    "Key",
    "ModelInfo",
    "NotFound",
    "OtherEvent",
    "Page",
    "Problem",
    "Project",
    "ProjectCaps",
    "RateLimited",
    "Review",
    "ReviewDecision",
    "ReviewDetail",
    "ReviserThinking",
    "RevisionProposed",
    "Round",
    "RoundEscalated",
    "RoundScored",
    "RoundStarted",
    "Run",
    "RunFailed",
    "RunFilters",
    "RunFinished",
    "RunOptions",
    "RunResumed",
    "RunStarted",
    "RunTrace",
    "ServerError",
    "ThinkloopError",
    "Unauthorized",
    "Verdict",
    "Version",
    "WaitingItems",
    "WebhookEndpoint",
]
