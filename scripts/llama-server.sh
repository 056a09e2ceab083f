#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` from the llama.cpp copy vendored in the llama-cpp-python
# source package on PyPI, into a cache outside the clone keyed by that version, so that only a
# machine's first run pays for the build (3-25 minutes on 2 cores). Prints the binary's path.
#
#   scripts/llama-server.sh            build if needed, print the path
#   THINKLOOP_LLAMA_CACHE=/some/dir    where the cache lives (default ~/.cache/thinkloop)
set -euo pipefail

version="${THINKLOOP_LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
cache="${THINKLOOP_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/thinkloop}"
dest="$cache/llama-server-$version"
binary="$dest/llama-server"

if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi

for tool in cmake ninja cc c++; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "llama-server.sh: '$tool' is missing (Debian: apt-get install cmake ninja-build build-essential)" >&2
    exit 2
  fi
done

mkdir -p "$cache"
work=$(mktemp -d "$cache/build-$version.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "llama-server.sh: building llama-server from llama-cpp-python $version (sdist) in $work" >&2
python3 -m pip download -q --no-deps --no-binary llama-cpp-python -d "$work" "llama-cpp-python==$version" >&2
tar -xzf "$work"/llama_cpp_python-"$version".tar.gz -C "$work"
src="$work/llama_cpp_python-$version/vendor/llama.cpp"
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
  -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF >&2
cmake --build "$work/build" --target llama-server -j "$(nproc)" >&2
# Installed in one rename, so a build killed half-way never leaves a binary that looks whole.
mkdir -p "$dest.tmp"
cp "$work/build/bin/llama-server" "$dest.tmp/llama-server"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "$binary"
