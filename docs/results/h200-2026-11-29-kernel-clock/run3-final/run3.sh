#!/bin/bash
# The final build: the GPU tests of both clocks; the fixed cost of a cold GEMM against k, by the
# kernels' clock; DeepGEMM's grouped sets by both clocks (no check: run 2 checked them).
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-final.xz > /tmp/host && chmod +x /tmp/host
xz -dc run/tests-gpu.xz > /tmp/tests-gpu && chmod +x /tmp/tests-gpu
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
row() { grep -E '^\| [a-z]|rror|FAIL|panic|CUPTI|clock' | grep -v '^| variant' | cut -c1-130; }
for t in the_kernels_clock_reads_less_than_the_events_around_them cold_timing_writes_before_each_run_and_leaves_the_result_alone; do
  timeout 200 /tmp/tests-gpu --exact $t --test-threads 1 --nocapture 2>&1 | grep -E "^test |test result|median|SKIPPED|panicked"
done > $L/tests.log 2>&1
for m in 7168 2112; do for k in 128 512 2048 7168; do
  for c in events kernels; do
    echo "== $c ${m}x64x$k"
    timeout 60 /tmp/host --dtype e4m3 --transa t --scaling block --seed 1 --iters 50 --no-check --cold --clock $c --variant auto --compare cublas --m $m --n 64 --k $k 2>&1 | row
  done
done; done > $L/fixed.log
for c in events kernels; do
  for nk in "4096 7168" "7168 2048"; do
    set -- $nk
    for gm in "4 8192" "8 4096" "masked 1 1024" "masked 2 512" "masked 4 256"; do
      case "$gm" in masked*) layout=--masked; gm=${gm#masked } ;; *) layout= ;; esac
      g=${gm% *}; tokens=${gm#* }
      echo "== $c m=$1 k=$2 groups=$g group-m=$tokens $layout"
      timeout 60 /tmp/host --variant auto --dtype e4m3 --scaling block --compare cublas --transa t --m $1 --k $2 --groups $g --group-m $tokens $layout --seed 1 --cold --clock $c --iters 30 --no-check 2>&1 | row
    done
  done
done > $L/grouped.log
