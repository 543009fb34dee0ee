#!/bin/bash
# The tile queue with an L2 prefetch of the operands a wave (:4, :6) or two (:5) ahead, against
# :2 and :3 without: the four attention problems, N,N and T,N, 1 024 members; then checks.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch' | grep -v '^| variant' | cut -c1-150; }
V=wgmma-queue:2,wgmma-queue:4,wgmma-queue:5,wgmma-queue:3,wgmma-queue:6
# warm the JIT cache once
timeout 200 /tmp/host --variant $V --dtype bf16 --m 256 --n 256 --k 128 --batch 4 --seed 1 2>&1 | row | tee $L/check.log
for shape in 2048x2048x128 2048x128x2048 512x512x64 128x128x128 2048x2048x128; do
  set -- ${shape//x/ }
  for t in n t; do
    echo "== $shape x1024 transa=$t"
    timeout 60 /tmp/host --variant $V --compare cublas --dtype bf16 --transa $t --m $1 --n $2 --k $3 --batch 1024 --seed 1 --no-check 2>&1 | row
  done
done | tee $L/queue.log
for t in n t; do
  timeout 100 /tmp/host --variant $V --dtype bf16 --transa $t --transb n --m 1000 --n 520 --k 200 --batch 40 --seed 2 2>&1 | row
  timeout 100 /tmp/host --variant $V --dtype f16 --transa $t --transb t --m 384 --n 300 --k 64 --batch 300 --seed 3 2>&1 | row
done | tee -a $L/check.log
tar czf $OUT/logs.tgz -C $OUT logs
