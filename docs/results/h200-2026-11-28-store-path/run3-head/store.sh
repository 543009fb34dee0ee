#!/bin/bash
# bf16's short-k batch on the H200: wgmma-queue:3 against cuBLAS at k = 16 (C's write stream
# alone) and 128 (the bar's problem), then where queue:3's warps wait at k = 16 (ncu's
# per-SASS stall samples).
set -u
cd "$(dirname "$0")/.."
xz -dc run/host.xz > /tmp/host && chmod +x /tmp/host
H=/tmp/host
mkdir -p $OUT/logs
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/logs/gpu.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant'; }
for k in 16 128; do
  echo "== batch 1024 m=2048 n=2048 k=$k"
  timeout 150 $H --variant wgmma-queue:3,wgmma-layouts:2 --compare cublas --dtype bf16 --m 2048 --n 2048 --k $k --batch 1024 --seed 1 --no-check 2>&1 | tee -a $OUT/logs/kscan.log | row
done
for v in wgmma-queue:3 cublas; do
  n=${v//:/-}
  f=gemm_wgmma; [ $v = cublas ] && f=nvjet
  timeout 200 ncu --clock-control none -k regex:$f --launch-count 1 --section SourceCounters --section WarpStateStats --section MemoryWorkloadAnalysis --section SpeedOfLight -o $OUT/logs/src-$n $H --variant $v --dtype bf16 --m 2048 --n 2048 --k 16 --batch 1024 --seed 1 --iters 1 --warmup 0 --no-check > $OUT/logs/src-$n.log 2>&1
  ncu --import $OUT/logs/src-$n.ncu-rep --page source --csv --print-source sass > $OUT/logs/src-$n.csv 2>&1
  ncu --import $OUT/logs/src-$n.ncu-rep --page details > $OUT/logs/details-$n.txt 2>&1
  gzip -f $OUT/logs/src-$n.csv; rm -f $OUT/logs/src-$n.ncu-rep
  grep -E "Duration|DRAM Throughput|Warp Cycles Per Issued|Stall" $OUT/logs/details-$n.txt | head -8
done
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
