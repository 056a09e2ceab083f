"""The FastAPI application: create_app(settings) and its lifespan."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import httpx
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi_offline import FastAPIOffline

from agents.llm.client import preload
from app import health
from app.access.quotas import Quotas
from app.batches import endpoints as batches
from app.batches.broker import send_run
from app.batches.runtime import batch_runtime, consuming
from app.batches.service import BatchService
from app.catalog import endpoints as catalog
from app.datasets import endpoints as datasets
from app.db import create_engine, session_factory
from app.errors_http import UnhandledErrors, install_error_handlers, with_problem_schema
from app.limits import BodySizeLimit
from app.logging import RequestIds, configure_logging
from app.metrics import ServiceMetrics
from app.panels import load_registry, panel_factory
from app.projects import endpoints as projects
from app.reviews import endpoints as reviews
from app.reviews.agreement import teacher_agreement
from app.reviews.labels import review_set
from app.reviews.queue import on_run_end
from app.runs import endpoints as runs
from app.runs.executor import open_executor
from app.runs.service import retaining
from app.runs.stream import listening
from app.runs.temporary import temporary_runs
from app.settings import Settings, get_settings
from app.validity import calibrate_endpoints as calibration
from app.validity import endpoints as validity
from app.validity import panel_endpoints as panel_records
from app.validity import record_endpoints
from app.viewer import endpoints as viewer
from app.webhooks import deliveries
from app.webhooks import endpoints as hooks
from app.webhooks.outbox import WebhookOutbox


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Engine, checkpointer, model clients and the run executor; unfinished runs resume."""
    settings: Settings = app.state.settings
    engine = create_engine(settings.database_url)
    async with AsyncExitStack() as stack:
        stack.push_async_callback(engine.dispose)
        factory = panel_factory(settings, load_registry(settings))
        stack.push_async_callback(factory.aclose)
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=settings.webhook_timeout_s))
        app.state.engine, app.state.sessions = engine, session_factory(engine)
        app.state.registry, app.state.metrics = factory.registry, ServiceMetrics()
        app.state.factory = factory
        # The validity bench's runs: the service's executor on a temporary store per request.
        app.state.temporary_runs = functools.partial(temporary_runs, settings, factory)
        app.state.review_set = review_set  # a project's teachers' decisions, as a labelled set
        app.state.teacher_agreement = teacher_agreement  # the judges against those decisions
        app.state.quotas = Quotas(settings)  # rate windows in memory, or in Redis when configured
        stack.push_async_callback(app.state.quotas.aclose)
        executor = await stack.enter_async_context(
            open_executor(settings, app.state.sessions, factory, app.state.metrics)
        )
        app.state.executor = executor
        preload()  # before any run starts: the first revision would otherwise stall the loop
        # -- background services (each one a context manager, stopped in reverse order) --
        # Webhooks: this process sends due deliveries from the outbox (any process may; one at a time each).
        app.state.outbox = WebhookOutbox(app.state.sessions, http, settings, executor.worker)
        executor.wake_webhooks = app.state.outbox.wake
        executor.on_end = on_run_end  # runs that need a teacher enter their project's review queue
        await stack.enter_async_context(app.state.outbox.sending())
        # Runs: embedded, this process claims queued runs and runs whose lease lapsed, and renews its
        # own; with Redis, `thinkloop worker`s do, and new runs are sent to them.
        if not settings.broker_url:
            await stack.enter_async_context(executor.running())
        # Retention: runs older than THINKLOOP_RETENTION_DAYS are deleted, every trace of them.
        await stack.enter_async_context(retaining(settings, app.state.sessions, executor.delete_checkpoints))
        # Streams: on PostgreSQL, other processes' announcements wake this one's streams of their runs.
        await stack.enter_async_context(listening(settings.database_url, executor.notifier))
        # -- end of background services --
        # Batches: embedded, this process runs their items; with Redis, `thinkloop batch worker`s do.
        broker, runner = await stack.enter_async_context(
            batch_runtime(settings, executor, grace_s=settings.batch_grace_s)
        )
        app.state.batches = BatchService(app.state.sessions, broker)
        if settings.broker_url:
            executor.send = functools.partial(send_run, broker)
        if not settings.broker_url:
            await stack.enter_async_context(consuming(broker, runner, settings))
        yield


def create_app(settings: Settings | None = None) -> FastAPI:
    """The thinkloop API."""
    settings = settings or get_settings()
    configure_logging(settings.log_level, settings.log_json)
    # FastAPIOffline serves /docs and /redoc with their scripts and styles from the package itself
    # (under /static-offline-docs), so the docs work with no network; FastAPI's load them from a CDN.
    app = FastAPIOffline(
        title="thinkloop",
        version="1.0.0",
        summary="Judge flawed math word problems with seven agents and refine them until they pass.",
        lifespan=lifespan,
        # operationId = the endpoint function's name (create_run, list_batches, …): stable across
        # path and method changes, and what generated clients name their methods after
        generate_unique_id_function=lambda route: route.name,
    )
    app.state.settings = settings
    install_error_handlers(app)
    with_problem_schema(app)
    app.include_router(health.router)
    app.include_router(runs.router)
    app.include_router(deliveries.router)
    app.include_router(deliveries.project_router)
    app.include_router(hooks.router)
    app.webhooks.include_router(deliveries.webhooks)
    app.webhooks.include_router(reviews.webhooks)
    app.include_router(datasets.router)
    app.include_router(batches.router)
    app.include_router(catalog.router)
    app.include_router(validity.router)
    app.include_router(calibration.router)
    app.include_router(panel_records.router)
    app.include_router(record_endpoints.router)
    app.include_router(projects.router)
    app.include_router(reviews.router)
    viewer.install(app)  # the browser viewer at /, a client of the routes above
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "PATCH", "DELETE"],
            allow_headers=[
                "Authorization",
                "X-API-Key",
                "Content-Type",
                "Idempotency-Key",
                "Last-Event-ID",
                "X-Request-ID",
            ],
            expose_headers=[
                "Location",
                "X-Request-ID",
                "Retry-After",
                "RateLimit-Limit",
                "RateLimit-Remaining",
                "RateLimit-Reset",
                "Idempotent-Replayed",
            ],
        )
    per_path = datasets.UPLOAD_LIMITS | validity.BODY_LIMITS
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes, per_path=per_path)
    app.add_middleware(UnhandledErrors)  # inside RequestIds: a 500 carries the id, its log line too
    app.add_middleware(RequestIds)  # outermost: even a 413 or a CORS refusal carries the id
    return app
