#!/bin/bash
# :1 (clusters of two along n sharing A: half of A's L2 reads) against :2, now that the
# epilogue carries no dead code: the four attention problems, N,N and T,N, 1 024 members.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch' | grep -v '^| variant' | cut -c1-150; }
for shape in 2048x2048x128 2048x128x2048 512x512x64 128x128x128; do
  set -- ${shape//x/ }
  for t in n t; do
    echo "== $shape x1024 transa=$t"
    timeout 150 /tmp/host --variant wgmma-queue:2,wgmma-queue:1 --compare cublas --dtype bf16 --transa $t --m $1 --n $2 --k $3 --batch 1024 --seed 1 --no-check 2>&1 | row
  done
done | tee $L/queue.log
tar czf $OUT/logs.tgz -C $OUT logs
