#!/bin/bash
# wgmma-queue:4 (two whole-tile staging sets in turn, two stages) beside :3 and cuBLAS, the four
# attention batches (bf16, 1 024 members, N,N), 2048x2048x128 twice; then the batch GPU test.
set -u
cd .gpu && for b in host tests-gpu; do xz -dc run/$b.xz > $b && chmod +x $b; done && cd ..
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant'; }
for shape in "2048 2048 128" "2048 2048 128" "2048 128 2048" "512 512 64" "128 128 128"; do
  set -- $shape
  echo "== batch 1024 m=$1 n=$2 k=$3"
  timeout 150 .gpu/host --variant wgmma-queue:3,wgmma-queue:4 --compare cublas --dtype bf16 --m $1 --n $2 --k $3 --batch 1024 --seed 1 2>&1 | tee -a $OUT/batch.log | row
done
echo "== T,N 2048x2048x128"
timeout 150 .gpu/host --variant wgmma-queue:3,wgmma-queue:4 --compare cublas --dtype bf16 --transa t --m 2048 --n 2048 --k 128 --batch 1024 --seed 1 2>&1 | tee -a $OUT/batch.log | row
echo "== GPU test: strided batches"
timeout 200 .gpu/tests-gpu strided_batches --test-threads 1 2>&1 | tee $OUT/gpu-test.log | grep -E "^test |result|panicked" | tail -4
