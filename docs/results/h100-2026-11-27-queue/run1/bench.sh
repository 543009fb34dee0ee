#!/bin/bash
# wgmma-queue: the tile queue as kernels of its own. bf16 batches of 1 024 members: auto, then
# the static kernels (wgmma-layouts, the same PTX as before the queue) beside their queued
# twins and cuBLAS in one process; ncu on the queue's kernel; the GPU tests that run it.
set -u
cd .gpu && for b in host tests-gpu; do xz -dc run/$b.xz > $b && chmod +x $b; done && cd ..
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant'; }
for shape in "2048 2048 128" "2048 128 2048" "512 512 64" "128 128 128"; do
  set -- $shape
  for t in n t; do
    echo "== auto batch 1024 m=$1 n=$2 k=$3 transa=$t"
    timeout 120 .gpu/host --variant auto --compare cublas --dtype bf16 --transa $t --m $1 --n $2 --k $3 --batch 1024 --seed 1 2>&1 | tee -a $OUT/batch-auto.log | row
  done
done
for shape in "2048 2048 128" "2048 128 2048" "512 512 64" "128 128 128"; do
  set -- $shape
  echo "== kernels batch 1024 m=$1 n=$2 k=$3"
  timeout 200 .gpu/host --variant wgmma-layouts:1,wgmma-queue:1,wgmma-layouts:2,wgmma-queue:2 --compare cublas --dtype bf16 --m $1 --n $2 --k $3 --batch 1024 --seed 1 2>&1 | tee -a $OUT/batch-kernels.log | row
done
echo "== ncu 2048x2048x128 batch 1024, wgmma-queue:1"
timeout 150 ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sector_hit_rate.pct -k regex:gemm_wgmma -c 1 .gpu/host --variant wgmma-queue:1 --dtype bf16 --m 2048 --n 2048 --k 128 --batch 1024 --seed 1 --no-check 2>&1 | tee $OUT/ncu.txt | grep -E "dram__|gpu__time|lts__|rror"
echo "== GPU tests: strided batches, graph capture"
timeout 300 .gpu/tests-gpu strided_batches plans_enqueue --test-threads 1 2>&1 | tee $OUT/gpu-test.log | grep -E "test |result|panic|tile queue|SKIP" | tail -12
