#!/bin/bash
# The kernels' clock, stamps of a series read at its end (run 1 read them per run, and
# cuBLASLt's split-k reduction came one run late): DeepGEMM's dense set and its grouped sets,
# `auto --scaling block` beside cuBLASLt in the same process, both clocks, cold.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-clock.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
row() { grep -E '^\| [a-z]|rror|FAIL|panic|CUPTI|clock' | grep -v '^| variant' | cut -c1-130; }
F="2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048 2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048"
timeout 120 /tmp/host --dtype e4m3 --transa t --scaling block --seed 1 --iters 20 --cold --clock kernels --variant auto --compare cublas --m 2112 --n 64 --k 7168 > $L/first.log 2>&1
for r in 1 2; do for c in events kernels; do
  for s in $F; do
    IFS=x read m n k <<< "$s"
    echo "== r$r $c $s"
    timeout 90 /tmp/host --dtype e4m3 --transa t --scaling block --seed 1 --iters 50 --no-check --cold --clock $c --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
done; done > $L/dense.log
for c in events kernels; do
  for nk in "4096 7168" "7168 2048"; do
    set -- $nk
    for gm in "4 8192" "8 4096" "masked 1 1024" "masked 2 512" "masked 4 256"; do
      case "$gm" in masked*) layout=--masked; gm=${gm#masked } ;; *) layout= ;; esac
      g=${gm% *}; tokens=${gm#* }
      echo "== $c m=$1 k=$2 groups=$g group-m=$tokens $layout"
      timeout 120 /tmp/host --variant auto --dtype e4m3 --scaling block --compare cublas --transa t --m $1 --k $2 --groups $g --group-m $tokens $layout --seed 1 --cold --clock $c --iters 30 2>&1 | row
    done
  done
done > $L/grouped.log
tar czf $OUT/logs.tgz -C $OUT logs
