#!/bin/bash
# The code as committed: auto over the attention batches (N,N and T,N) beside cuBLAS; the static
# kernels beside wgmma-queue:3 where the rule decides; the GPU tests that run the queue.
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
  timeout 200 .gpu/host --variant wgmma-layouts:1,wgmma-layouts:2,wgmma-queue:1,wgmma-queue:3 --compare cublas --dtype bf16 --m $1 --n $2 --k $3 --batch 1024 --seed 1 2>&1 | tee -a $OUT/batch-kernels.log | row
done
echo "== GPU tests: strided batches, graph capture"
timeout 300 .gpu/tests-gpu strided_batches plans_enqueue --test-threads 1 2>&1 | tee $OUT/gpu-test.log | grep -E "^test |result|panicked" | tail -6
