#!/bin/bash
# The 16-token tiles without zeroing the rows past their box (host-swap6) against run 19's
# build (host-swap5), cold, two rounds alternating; the graph and epilogue tests again.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-swap6.xz > /tmp/host && chmod +x /tmp/host
xz -dc run/host-swap5.xz > /tmp/host5 && chmod +x /tmp/host5
xz -dc run/tests-gpu.xz > /tmp/tests-gpu && chmod +x /tmp/tests-gpu
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror:|FAIL|panic' | grep -v '^| variant' | cut -c1-130; }
timeout 300 /tmp/tests-gpu --test-threads 1 --nocapture plans_enqueue_into_a_cuda_graph fused_epilogues_match > $L/tests.log 2>&1
grep -E "test result|captured and replayed|panicked" $L/tests.log | cut -c1-600
for r in 1 2; do
  for s in 4096x1x4096 4096x16x4096 6144x16x4096 7168x16x2048 28672x16x4096 6144x64x4096; do
    IFS=x read m n k <<< "$s"
    for b in 6 5; do
      h=/tmp/host; [ $b = 5 ] && h=/tmp/host5
      [ $r = 2 ] && { [ $b = 5 ] && h=/tmp/host || h=/tmp/host5; }
      echo "== r$r $([ $h = /tmp/host ] && echo new || echo zeroed) $s"
      timeout 60 $h --dtype bf16 --transa t --seed 1 --iters 50 --no-check --cold --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
    done
  done
done > $L/prepare.log
tar czf $OUT/logs.tgz -C $OUT logs
