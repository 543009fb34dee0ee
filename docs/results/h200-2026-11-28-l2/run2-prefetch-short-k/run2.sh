#!/bin/bash
# run1's missing problem: 2048 x 2048 x 128, 1 024 members, :2 against the prefetching :4 and :6.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch' | grep -v '^| variant' | cut -c1-150; }
for t in n t n; do
  echo "== 2048x2048x128 x1024 transa=$t"
  /usr/bin/time -f "%e s" timeout 200 /tmp/host --variant wgmma-queue:2,wgmma-queue:4,wgmma-queue:6 --compare cublas --dtype bf16 --transa $t --m 2048 --n 2048 --k 128 --batch 1024 --seed 1 --no-check 2>&1 | row
done | tee $L/queue.log
tar czf $OUT/logs.tgz -C $OUT logs
