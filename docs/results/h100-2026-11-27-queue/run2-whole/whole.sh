#!/bin/bash
# The write stream: wgmma-queue with the whole tile's four staging buffers per warpgroup (one
# barrier pair per tile instead of one per subtile) and three stages, :3 (clusters of two) and
# :4 (none), beside :1 and :2, in one process with cuBLAS; ncu's warp states on :3.
set -u
cd .gpu && xz -dc run/host.xz > host && chmod +x host && cd ..
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant'; }
for shape in "2048 2048 128" "2048 128 2048" "512 512 64"; do
  set -- $shape
  echo "== kernels batch 1024 m=$1 n=$2 k=$3"
  timeout 200 .gpu/host --variant wgmma-queue:1,wgmma-queue:2,wgmma-queue:3,wgmma-queue:4 --compare cublas --dtype bf16 --m $1 --n $2 --k $3 --batch 1024 --seed 1 2>&1 | tee -a $OUT/whole-kernels.log | row
done
for shape in "--size 8192" "--m 4096 --n 4096 --k 1024"; do
  echo "== single $shape"
  timeout 100 .gpu/host --variant wgmma-layouts:1,wgmma-queue:3,wgmma-queue:4 --compare cublas --dtype bf16 $shape --seed 1 2>&1 | tee -a $OUT/whole-single.log | row
done
S="--section WarpStateStats --section SchedulerStats"
timeout 200 ncu $S --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum -k regex:gemm_wgmma -c 1 .gpu/host --variant wgmma-queue:3 --dtype bf16 --m 2048 --n 2048 --k 128 --batch 1024 --seed 1 --no-check > $OUT/ncu-queue3.txt 2>&1
grep -E "dram__|gpu__time|Warp Cycles|stalled|represents" $OUT/ncu-queue3.txt | head
