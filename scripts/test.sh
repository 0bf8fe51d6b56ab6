#!/usr/bin/env bash
# Set up and run the whole test suite (unit, protocol, client and end-to-end tests with a real
# llama-server and the small SmolLM2 model, and real headless Chromium for the browse tests).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/chromium.sh
.venv/bin/cadenza models pull smollm2-135m
.venv/bin/python -m pytest "$@"
