#!/bin/bash
# wgmma-stream-k:1, whose new build keeps one word per work unit in local memory: HEAD's host
# against the new one, alternating, where stream-k is for (few tiles, long k) and at 4096^3.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host.xz > /tmp/host-head && xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host /tmp/host-head
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant' | cut -c1-150; }
for h in host-head host host-head host; do
  for s in "--m 2048 --n 2048 --k 8192" "--m 1024 --n 1024 --k 16384" "--size 4096"; do
    echo "== $h $s"; timeout 40 /tmp/$h --variant wgmma-stream-k:1 --compare cublas --dtype bf16 $s --seed 1 --no-check 2>&1 | row
  done
done | tee $L/stream-k.log
