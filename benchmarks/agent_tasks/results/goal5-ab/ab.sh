#!/usr/bin/env bash
# Goal 5 A/B: each task of the 22-task set on the tree before and after the static system
# prompt, alternating which goes first; each tree keeps its own prompt-cache folder.
mkdir -p /work/measure/ab/before /work/measure/ab/after /work/measure/cache-before /work/measure/cache-after
i=0
for t in $(seq -w 1 22); do
  if (( i % 2 == 0 )); then order="before after"; else order="after before"; fi
  for side in $order; do
    dir=/work/measure/clone; [ $side = after ] && dir=/work/measure/after
    echo "== $(date -u +%H:%M:%S) t$t $side" >> /work/measure/ab.log
    ( cd $dir && CADENZA_PROMPT_CACHE=/work/measure/cache-$side .venv/bin/python -m benchmarks.agent_tasks.run \
        --model local/qwen2.5-coder-1.5b --max-steps 8 --timeout 600 --tasks t$t \
        --results-dir /work/measure/ab/$side >> /work/measure/ab-$side.log 2>&1 )
    [ -f /work/measure/STOP ] && exit 0
  done
  i=$((i+1))
done
echo "== end $(date -u +%H:%M:%S)" >> /work/measure/ab.log
