#!/bin/bash
# wgmma-swap (bf16, f16): checks at edges, then every tile beside auto (narrow) and cuBLAS at
# decode shapes, cold and warm.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-swap3.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
T=wgmma-swap:116,wgmma-swap:124,wgmma-swap:132,wgmma-swap:148,wgmma-swap:156,wgmma-swap:164,wgmma-swap:32,wgmma-swap:48,wgmma-swap:64,wgmma-swap:232,wgmma-swap:248,wgmma-swap:264,wgmma-narrow:16
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant' | cut -c1-120; }
for s in 1000x72x4160 2112x130x1000; do
  IFS=x read m n k <<< "$s"
  for d in bf16 f16; do
    echo "== check $d $s"
    timeout 120 /tmp/host --dtype $d --transa t --seed 2 --iters 3 --variant wgmma-swap:232,wgmma-swap:248,wgmma-swap:264,wgmma-swap:108 --m $m --n $n --k $k 2>&1 | row
  done
  echo "== check bias,gelu beta $s"
  timeout 120 /tmp/host --dtype bf16 --transa t --seed 2 --iters 3 --variant wgmma-swap:232,wgmma-swap:264 --m $m --n $n --k $k --ldc 1008 --beta 0.5 --epilogue bias,gelu 2>&1 | row
done > $L/checks.log
for s in 1000x72x4160 2112x130x1000; do
  IFS=x read m n k <<< "$s"
  echo "== check e4m3 block swap $s"
  timeout 120 /tmp/host --dtype e4m3 --scaling block --transa t --seed 2 --iters 3 --variant wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:216,wgmma-fp8-block-swap:332,wgmma-fp8-block-swap:64 --m $m --n $n --k $k 2>&1 | row
done >> $L/checks.log
for mode in cold; do
  c=""; [ $mode = cold ] && c=--cold
  for s in 2112x64x1024 2112x64x7168 1024x64x4096 4096x16x4096 4096x64x4096 4096x128x4096 6144x16x4096 6144x64x4096 6144x128x4096 4096x64x14336 4096x128x14336 7168x64x2048 28672x16x4096 28672x128x4096; do
    IFS=x read m n k <<< "$s"
    echo "== $mode $s"
    timeout 120 /tmp/host --dtype bf16 --transa t --seed 1 --iters 50 --no-check $c --variant auto,$T --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
done | tee $L/sweep.log
tar czf $OUT/logs.tgz -C $OUT logs
