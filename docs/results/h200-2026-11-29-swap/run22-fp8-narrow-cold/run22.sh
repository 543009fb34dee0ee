#!/bin/bash
# e4m3 with one scale per tensor at decode shapes, cold: auto (wgmma-fp8-narrow) against cuBLASLt.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-swap6.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
row() { grep -E '^\| [a-z]|rror:|FAIL|panic' | grep -v '^| variant' | cut -c1-130; }
for s in 2112x16x7168 4096x16x4096 6144x16x4096 2112x64x7168 4096x64x4096 6144x64x4096 7168x64x2048 4096x128x4096 6144x128x4096 28672x16x4096; do
  IFS=x read m n k <<< "$s"
  echo "== cold $s"
  timeout 60 /tmp/host --dtype e4m3 --transa t --seed 1 --iters 50 --no-check --cold --variant auto,wgmma-fp8-narrow:16,wgmma-fp8-narrow:64 --compare cublas --m $m --n $n --k $k 2>&1 | row
done > $L/fp8.log
tar czf $OUT/logs.tgz -C $OUT logs
