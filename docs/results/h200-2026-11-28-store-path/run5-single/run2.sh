#!/bin/bash
# Single problems, HEAD's host against the new one, alternating (two rounds), then the e4m3
# batches the last run did not reach, and the write stream alone (k = 16).
set -u
cd "$(dirname "$0")/.."
xz -dc run/host.xz > /tmp/host-head && xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host /tmp/host-head
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant' | cut -c1-150; }
for h in host-head host host-head host; do
  echo "== squares $h"
  timeout 60 /tmp/$h --variant auto --compare cublas --dtype bf16 --size 4096 --seed 1 --no-check 2>&1 | row
  timeout 60 /tmp/$h --variant auto --compare cublas --dtype bf16 --size 8192 --seed 1 --no-check 2>&1 | row
  timeout 60 /tmp/$h --variant auto --compare cublas --dtype bf16 --transa t --m 6144 --n 4096 --k 4096 --epilogue bias,gelu --seed 1 --no-check 2>&1 | row
  timeout 60 /tmp/$h --variant auto --compare cublas --dtype e4m3 --transa t --scaling block --m 4096 --n 4096 --k 7168 --seed 1 --no-check 2>&1 | row
  timeout 60 /tmp/$h --variant auto --compare cublas --dtype e4m3 --transa t --m 4096 --n 4096 --k 4096 --seed 1 --no-check 2>&1 | row
  timeout 60 /tmp/$h --variant auto --compare cublas --dtype f32 --math fp32-accurate --size 4096 --seed 1 --no-check 2>&1 | row
done | tee $L/squares.log
for sc in 512x512x64x1024 128x128x128x1024; do
  set -- ${sc//x/ }
  for h in host-head host; do
    echo "== e4m3 tensor $h $1x$2x$3 x$4"; timeout 60 /tmp/$h --variant auto --compare cublas --dtype e4m3 --transa t --m $1 --n $2 --k $3 --batch $4 --seed 1 --no-check 2>&1 | row
  done
done | tee $L/e4m3-batch.log
echo "== k=16" | tee $L/k16.log
timeout 60 /tmp/host --variant wgmma-queue:3 --compare cublas --dtype bf16 --m 2048 --n 2048 --k 16 --batch 1024 --seed 1 --no-check 2>&1 | row | tee -a $L/k16.log
tar czf $OUT/logs.tgz -C $OUT logs
