#!/bin/bash
# The committed build: the two clocks' GPU tests again; the swapped kernel's tiles at 7168 rows
# by the kernels' clock; ncu's view of `:164`'s stream at 7168 x 64 x 7168.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-final.xz > /tmp/host && chmod +x /tmp/host
xz -dc run/tests-gpu.xz > /tmp/tests-gpu && chmod +x /tmp/tests-gpu
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
row() { grep -E '^\| [a-z]|rror|FAIL|panic|CUPTI|clock' | grep -v '^| variant' | cut -c1-130; }
for t in the_kernels_clock_reads_less_than_the_events_around_them cold_timing_writes_before_each_run_and_leaves_the_result_alone; do
  timeout 200 /tmp/tests-gpu --exact $t --test-threads 1 --nocapture 2>&1 | grep -E "^test |test result|median|SKIPPED|panicked"
done > $L/tests.log 2>&1
for s in 7168x64x2048 7168x64x7168 4096x64x7168; do
  IFS=x read m n k <<< "$s"
  echo "== $s"
  timeout 90 /tmp/host --dtype e4m3 --transa t --scaling block --seed 1 --iters 50 --no-check --cold --clock kernels --variant wgmma-fp8-block-swap:116,wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:164,wgmma-fp8-block-swap:432,wgmma-fp8-block-swap:448,wgmma-fp8-block:8 --compare cublas --m $m --n $n --k $k 2>&1 | row
done > $L/tiles.log
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 200 $NCU --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --cache-control all --clock-control none -k regex:gemm_wgmma -c 1 \
  /tmp/host --dtype e4m3 --transa t --scaling block --seed 1 --iters 1 --warmup 0 --no-check --variant wgmma-fp8-block-swap:164 --m 7168 --n 64 --k 7168 > $L/ncu-164.txt 2>&1
