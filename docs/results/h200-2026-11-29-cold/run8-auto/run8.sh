#!/bin/bash
# auto over DeepGEMM's dense block-scaled set: HEAD (host-d4: HEAD's kernels and rule, with
# --cold) against the new build (host-rule: the swapped kernel's scales by bulk copy and lanes,
# the swapped tile chosen by its wave), cold and warm, two rounds; then fewer rows of weights.
set -u
cd "$(dirname "$0")/.."
for h in host-rule host-d4; do xz -dc run/$h.xz > /tmp/$h && chmod +x /tmp/$h; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1 --iters 50"
for s in 2112x64x7168 7168x128x2048 4096x128x7168 1024x128x7168; do
  IFS=x read m n k <<< "$s"
  timeout 60 /tmp/host-rule $B --variant auto --m $m --n $n --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-130
done | tee $L/checked.log
for r in 1 2; do
for mode in cold warm; do
for h in host-d4 host-rule; do
for s in 2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048 \
         2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 \
         2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048; do
  IFS=x read m n k <<< "$s"
  c=""; [ $mode = cold ] && c=--cold
  echo "== $r $mode $h $s"
  timeout 60 /tmp/$h $B $c --no-check --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-110
done
done
done
done > $L/dense.log
S=wgmma-fp8-block-swap
for s in 1024x64x7168 1024x128x7168 1536x64x7168 1536x128x7168; do
  IFS=x read m n k <<< "$s"
  echo "== $s"
  timeout 60 /tmp/host-rule $B --cold --no-check --variant auto,$S:116,$S:132,$S:16,wgmma-fp8-block-narrow:64,wgmma-fp8-block-narrow:128 --compare cublas --m $m --n $n --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-110
done | tee $L/small.log
tar czf $OUT/logs.tgz -C $OUT logs
