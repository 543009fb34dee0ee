#!/bin/bash
# auto on the four attention problems (1 024 members, N,N and T,N) with the build as committed:
# it should take wgmma-queue:3.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch' | grep -v '^| variant' | cut -c1-150; }
for shape in 128x128x128 512x512x64 2048x128x2048 2048x2048x128; do
  set -- ${shape//x/ }
  for t in n t; do
    echo "== $shape x1024 transa=$t"
    timeout 80 /tmp/host --variant auto --compare cublas --dtype bf16 --transa $t --m $1 --n $2 --k $3 --batch 1024 --seed 1 --no-check 2>&1 | row
  done
done | tee $L/auto.log
tar czf $OUT/logs.tgz -C $OUT logs
