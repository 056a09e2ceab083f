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
# "-avx2": the build's CPU features are part of the key (see the cmake line below).
dest="$cache/llama-server-$version-avx2"
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
# Not -DGGML_NATIVE=ON: on a Xeon with AMX (Sapphire Rapids, as some of our CI machines are) a
# native build compiles ggml's AMX kernels, and the server then dies of SIGSEGV in
# ggml_backend_amx_mul_mat while it warms up (seen 2026-11-27 in a VM). AVX2 with FMA and F16C is
# what every x86-64 machine of the last ten years runs, and is fast enough for a 270M model.
if ! grep -q ' avx2 ' /proc/cpuinfo 2>/dev/null && [ "$(uname -m)" = x86_64 ]; then
  echo "llama-server.sh: this CPU has no AVX2; the real-model tier needs it" >&2
  exit 2
fi
cpu_flags=(-DGGML_NATIVE=OFF)
if [ "$(uname -m)" = x86_64 ]; then
  cpu_flags+=(-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON)
fi
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cpu_flags[@]}" \
  -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF >&2
cmake --build "$work/build" --target llama-server -j "$(nproc)" >&2
# Installed in one rename, so a build killed half-way never leaves a binary that looks whole.
mkdir -p "$dest.tmp"
cp "$work/build/bin/llama-server" "$dest.tmp/llama-server"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "$binary"
