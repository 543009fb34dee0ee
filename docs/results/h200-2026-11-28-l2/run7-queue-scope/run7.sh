#!/bin/bash
# The tile queue's publication at the block's scope when a cluster is one block (no MEMBAR.GPU
# per unit in the leader, no L1 invalidation per unit in the readers): HEAD's build (host-head)
# against the new one, alternating, :2 and :3 at the four attention problems; then checks.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-head.xz > /tmp/host-head && xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host /tmp/host-head
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch' | grep -v '^| variant' | cut -c1-150; }
V=wgmma-queue:2,wgmma-queue:3
for shape in 2048x2048x128 2048x128x2048 512x512x64 128x128x128 2048x2048x128; do
  set -- ${shape//x/ }
  for t in n t; do
    for h in host-head host; do
      echo "== $h $shape x1024 transa=$t"
      timeout 120 /tmp/$h --variant $V --compare cublas --dtype bf16 --transa $t --m $1 --n $2 --k $3 --batch 1024 --seed 1 --no-check 2>&1 | row
    done
  done
done | tee $L/queue.log
for t in n t; do
  timeout 100 /tmp/host --variant $V,wgmma-queue:1 --dtype bf16 --transa $t --m 1000 --n 520 --k 200 --batch 40 --seed 2 2>&1 | row
  timeout 100 /tmp/host --variant $V,wgmma-queue:1 --dtype f16 --transa $t --transb t --m 384 --n 304 --k 64 --batch 300 --seed 3 2>&1 | row
done | tee $L/check.log
timeout 150 compute-sanitizer --tool racecheck /tmp/host --variant wgmma-queue:2 --dtype bf16 --m 520 --n 264 --k 72 --batch 3 --seed 1 --iters 1 --warmup 0 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|pass|FAIL" | cut -c1-120 | tee $L/racecheck.log
tar czf $OUT/logs.tgz -C $OUT logs
