#!/bin/bash
# bf16 at decode sizes (Llama-3 8B's layers, T,N), auto against cuBLAS, warm and cold.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-final.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
for s in 6144x16x4096 6144x64x4096 6144x128x4096 28672x16x4096 28672x128x4096 4096x64x14336 4096x128x14336 2112x64x1024; do
  IFS=x read m n k <<< "$s"
  for mode in warm cold; do
    c=""; [ $mode = cold ] && c=--cold
    echo "== $mode $s"
    timeout 60 /tmp/host --dtype bf16 --transa t --seed 1 --iters 50 --no-check $c --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-110
  done
done | tee $L/bf16.log
tar czf $OUT/logs.tgz -C $OUT logs
