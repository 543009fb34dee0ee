#!/bin/bash
# Where wgmma-queue:2 and cuBLAS spend 2048 x 2048 x 128 (256 members): speed of light, memory,
# warp states; :2's stall samples per SASS instruction.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host
H=/tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
A="--dtype bf16 --m 2048 --n 2048 --k 128 --batch 256 --seed 1 --iters 1 --warmup 0 --no-check"
timeout 200 ncu --clock-control none -k regex:gemm_wgmma --launch-count 1 $S --section SourceCounters -o $L/q2 $H --variant wgmma-queue:2 $A > $L/q2.log 2>&1
timeout 200 ncu --clock-control none -k regex:'^(nvjet|sm90|cutlass|xmma)' --launch-count 1 $S -o $L/cb $H --variant cublas $A > $L/cb.log 2>&1
for n in q2 cb; do ncu --import $L/$n.ncu-rep --page details > $L/$n-details.txt 2>&1; done
ncu --import $L/q2.ncu-rep --page source --csv --print-source sass > $L/q2-src.csv 2>&1
gzip -f $L/q2-src.csv; rm -f $L/*.ncu-rep
tar czf $OUT/logs.tgz -C $OUT logs
