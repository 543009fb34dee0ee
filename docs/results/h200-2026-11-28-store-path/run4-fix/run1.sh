#!/bin/bash
# The epilogue without per-pair branches on beta: HEAD's host against the new one, in the same
# process as cuBLAS/cuBLASLt each, on the batch bars (bf16, f32 fp32-accurate, e4m3 per tensor)
# and on single squares; beta != 0 checked through the new path.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host.xz > /tmp/host-head && xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host /tmp/host-head
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant' | cut -c1-150; }
echo "== beta != 0, checked (new)"
/tmp/host --variant auto,wgmma-queue:3,wgmma-tma-store:1,wgmma-16bit:1 --dtype bf16 --m 1000 --n 1032 --k 200 --beta 0.5 --seed 1 --iters 2 2>&1 | grep -E "PASS|FAIL|rror" | cut -c1-120 | tee $L/beta.log
/tmp/host --variant auto --dtype bf16 --m 520 --n 264 --k 72 --beta 0.5 --batch 9 --seed 1 --iters 2 2>&1 | grep -E "PASS|FAIL|rror" | cut -c1-120 | tee -a $L/beta.log
/tmp/host --variant auto --dtype f32 --math fp32-accurate --m 1000 --n 1032 --k 600 --beta 0.5 --seed 1 --iters 2 2>&1 | grep -E "PASS|FAIL|rror" | cut -c1-120 | tee -a $L/beta.log
/tmp/host --variant auto --dtype e4m3 --transa t --scaling block --m 1000 --n 1032 --k 640 --beta 0.5 --seed 1 --iters 2 2>&1 | grep -E "PASS|FAIL|rror" | cut -c1-120 | tee -a $L/beta.log
for shape in 2048x2048x128 2048x128x2048 512x512x64 128x128x128; do
  set -- ${shape//x/ }
  for h in host-head host; do
    chk=--no-check; [ $h = host ] && chk=
    echo "== bf16 $h $shape x1024"; timeout 120 /tmp/$h --variant auto --compare cublas --dtype bf16 --m $1 --n $2 --k $3 --batch 1024 --seed 1 $chk 2>&1 | row
  done
done | tee $L/bf16-batch.log
for shape in 2048x2048x128 2048x128x2048 512x512x64 128x128x128; do
  set -- ${shape//x/ }
  for h in host-head host; do
    chk=--no-check; [ $h = host ] && chk=
    echo "== f32 fp32-accurate $h $shape x1024"; timeout 120 /tmp/$h --variant auto --compare cublas --dtype f32 --math fp32-accurate --m $1 --n $2 --k $3 --batch 1024 --seed 1 $chk 2>&1 | row
  done
done | tee $L/f32-batch.log
for sc in 2048x2048x128x256 2048x128x2048x1024 512x512x64x1024 128x128x128x1024; do
  set -- ${sc//x/ }
  for h in host-head host; do
    echo "== e4m3 tensor $h $1x$2x$3 x$4"; timeout 120 /tmp/$h --variant auto --compare cublas --dtype e4m3 --transa t --m $1 --n $2 --k $3 --batch $4 --seed 1 --no-check 2>&1 | row
  done
done | tee $L/e4m3-batch.log
for h in host-head host host-head host; do
  echo "== squares $h"
  /tmp/$h --variant auto --compare cublas --dtype bf16 --size 4096 --seed 1 --no-check 2>&1 | row
  /tmp/$h --variant auto --compare cublas --dtype bf16 --size 8192 --seed 1 --no-check 2>&1 | row
  /tmp/$h --variant auto --compare cublas --dtype e4m3 --transa t --scaling block --m 4096 --n 4096 --k 7168 --seed 1 --no-check 2>&1 | row
  /tmp/$h --variant auto --compare cublas --dtype f32 --math fp32-accurate --size 8192 --seed 1 --no-check 2>&1 | row
done | tee $L/squares.log
tar czf $OUT/logs.tgz -C $OUT logs
