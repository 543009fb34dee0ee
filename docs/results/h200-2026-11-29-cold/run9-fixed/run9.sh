#!/bin/bash
# The fixed part of a decode-sized block-scaled GEMM on cold L2: k from one slice to 56.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-rule.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
B="--dtype e4m3 --transa t --scaling block --seed 1 --iters 50 --no-check --cold"
for k in 128 512 2048 7168; do
  echo "== 2112x64x$k"
  timeout 60 /tmp/host $B --variant wgmma-fp8-block-swap:116,wgmma-fp8-block:8 --compare cublas --m 2112 --n 64 --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-110
done | tee $L/fixed.log
tar czf $OUT/logs.tgz -C $OUT logs
