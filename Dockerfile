# syntax=docker/dockerfile:1
# Build: docker build -t thinkloop .
# Run:   docker run --rm thinkloop refine --example orchestra

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
RUN uv sync --frozen --no-dev --no-editable

FROM python:3.11-slim AS runtime
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin thinkloop
# Same path as in the build stage: the venv's scripts point at /opt/venv/bin/python.
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
USER thinkloop
WORKDIR /home/thinkloop
ENTRYPOINT ["thinkloop"]
CMD ["--help"]
