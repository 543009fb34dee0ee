#!/bin/bash
# auto as committed (host-swap6) against cuBLAS at the decode shapes, cold and warm, two rounds.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-swap6.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror:|FAIL|panic' | grep -v '^| variant' | cut -c1-130; }
S="2112x1x7168 4096x1x4096 2112x16x7168 4096x16x4096 6144x16x4096 7168x16x2048 28672x16x4096 2112x64x1024 2112x64x7168 1024x64x4096 4096x64x4096 6144x64x4096 7168x64x2048 4096x64x14336 2112x128x7168 4096x128x4096 6144x128x4096 4096x128x14336 28672x128x4096"
for r in 1 2; do
  for mode in cold warm; do
    c=""; [ $mode = cold ] && c=--cold
    for s in $S; do
      IFS=x read m n k <<< "$s"
      echo "== r$r $mode new $s"
      timeout 60 /tmp/host --dtype bf16 --transa t --seed 1 --iters 50 --no-check $c --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
    done
  done
done > $L/auto.log
tar czf $OUT/logs.tgz -C $OUT logs
