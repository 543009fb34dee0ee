#!/bin/bash
# After the epilogue fix: every 16-bit batch kernel at 2048 x 2048 x K (1 024 members), then
# where wgmma-queue:3's warps wait at k = 128; memcheck on the beta != 0 path.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host
H=/tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant' | cut -c1-150; }
for k in 64 128 256; do
  echo "== 2048 x 2048 x $k x1024"
  timeout 90 $H --variant wgmma-queue:3,wgmma-queue:2,wgmma-queue:1,wgmma-layouts:2 --compare cublas --dtype bf16 --m 2048 --n 2048 --k $k --batch 1024 --seed 1 --no-check 2>&1 | row
done | tee $L/kernels.log
timeout 120 compute-sanitizer --tool memcheck $H --variant wgmma-queue:3,wgmma-layouts:2,wgmma-tma-store:5 --dtype bf16 --m 520 --n 264 --k 72 --beta 0.5 --batch 3 --seed 1 --iters 1 --warmup 0 2>&1 | grep -E "ERROR SUMMARY|PASS|FAIL" | cut -c1-100 | tee $L/memcheck.log
n=queue3-k128
timeout 150 ncu --clock-control none -k regex:gemm_wgmma --launch-count 1 --section SourceCounters --section WarpStateStats -o $L/src-$n $H --variant wgmma-queue:3 --dtype bf16 --m 2048 --n 2048 --k 128 --batch 1024 --seed 1 --iters 1 --warmup 0 --no-check > $L/src-$n.log 2>&1
ncu --import $L/src-$n.ncu-rep --page source --csv --print-source sass > $L/src-$n.csv 2>&1
gzip -f $L/src-$n.csv; rm -f $L/src-$n.ncu-rep
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
