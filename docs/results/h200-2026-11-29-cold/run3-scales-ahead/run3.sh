#!/bin/bash
# The swapped block-scaled kernel on cold L2 (--cold): A's scales loaded 4 slices ahead
# (host-d4) against 16 (host-new), every tile width, at DeepGEMM's shapes it runs.
set -u
cd "$(dirname "$0")/.."
for h in host-new host-d4; do xz -dc run/$h.xz > /tmp/$h && chmod +x /tmp/$h; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1 --iters 50 --cold"
timeout 100 /tmp/host-new $B --variant wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:32 --m 2112 --n 128 --k 8976 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-130 | tee $L/checked.log
V=wgmma-fp8-block-swap:116,wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:164,wgmma-fp8-block-swap:16,wgmma-fp8-block-swap:32,wgmma-fp8-block-swap:64,wgmma-fp8-block:8,wgmma-fp8-block:10
for r in 1 2; do
for h in host-d4 host-new; do
for s in 2112x64x7168 4096x64x7168 2112x128x7168 4096x128x7168; do
  IFS=x read m n k <<< "$s"
  echo "== $r $h $s"
  timeout 60 /tmp/$h $B --no-check --variant $V --compare cublas --m $m --n $n --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-110
done
done
done | tee $L/swap.log
tar czf $OUT/logs.tgz -C $OUT logs
