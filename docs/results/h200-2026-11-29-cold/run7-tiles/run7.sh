#!/bin/bash
# DeepGEMM's dense set at 64 and 128 tokens on cold L2 (--cold), the new swapped kernel
# (host-bulk) at every tile beside the other block-scaled kernels and cuBLASLt: which wins where.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-bulk.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
B="--dtype e4m3 --transa t --scaling block --seed 1 --iters 50 --no-check --cold"
S=wgmma-fp8-block-swap
V=auto,$S:116,$S:132,$S:164,$S:16,$S:24,$S:32,$S:48,$S:56,$S:64,wgmma-fp8-block:8,wgmma-fp8-block:9,wgmma-fp8-block:10,wgmma-fp8-block-narrow:64
for r in 1 2; do
for s in 2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048 \
         2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048; do
  IFS=x read m n k <<< "$s"
  echo "== $r $s"
  timeout 100 /tmp/host $B --variant $V --compare cublas --m $m --n $n --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-110
done
done | tee $L/sweep.log > /dev/null
tar czf $OUT/logs.tgz -C $OUT logs
