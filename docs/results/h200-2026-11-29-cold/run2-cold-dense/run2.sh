#!/bin/bash
# DeepGEMM's dense block-scaled set at 64 and 128 tokens (and two of 4096): auto and cuBLASLt,
# timed as before (each launch after the last run's end, warm L2) and with --cold (a 256 MiB
# write before each run: L2 flushed, the launch queued behind it), two rounds.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1 --no-check --iters 50"
for r in 1 2; do
for s in 2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048 \
         2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 \
         4096x4096x7168 2112x4096x7168; do
  IFS=x read m n k <<< "$s"
  for mode in warm cold; do
    c=""; [ $mode = cold ] && c=--cold
    echo "== $r $mode $s"
    timeout 60 /tmp/host $B $c --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-110
  done
done
done | tee $L/dense.log
tar czf $OUT/logs.tgz -C $OUT logs
