# syntax=docker/dockerfile:1
# Build: docker build --build-arg GIT_REVISION="$(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD || echo +dirty)" -t thinkloop .
#        (the image has no .git: without the argument, manifests record no git revision)
# API:   docker run -p 8000:8000 -v thinkloop-data:/data thinkloop            (migrates, then serves)
# Key:   docker run --rm -v thinkloop-data:/data thinkloop keys create --name my-app
# CLI:   docker run --rm thinkloop refine --example orchestra

FROM python:3.11-slim AS build
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/opt/venv
RUN pip install --no-cache-dir "uv==0.13.9"
WORKDIR /src
# Dependencies first, so source edits do not invalidate this layer.
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project
COPY app ./app
COPY agents ./agents
COPY graphs ./graphs
COPY prompts ./prompts
COPY migrations ./migrations
COPY thinkloop_client ./thinkloop_client
RUN uv sync --frozen --no-dev --no-editable

FROM python:3.11-slim AS runtime
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin thinkloop \
    && mkdir /data && chown thinkloop:thinkloop /data
# Same path as in the build stage: the venv's scripts point at /opt/venv/bin/python.
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    THINKLOOP_HOST=0.0.0.0 \
    THINKLOOP_PORT=8000 \
    THINKLOOP_LOG_JSON=true \
    THINKLOOP_LOG_LEVEL=INFO \
    THINKLOOP_DATABASE_URL=sqlite+aiosqlite:////data/thinkloop.db
# Last, so that a new revision rebuilds only this layer; manifests and --version report it.
ARG GIT_REVISION=
ENV THINKLOOP_GIT_REVISION=$GIT_REVISION
USER thinkloop
WORKDIR /home/thinkloop
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
ENTRYPOINT ["thinkloop"]
CMD ["serve"]
