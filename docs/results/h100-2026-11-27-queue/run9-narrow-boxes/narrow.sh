#!/bin/bash
# C in boxes of 64 m x 32 n, each stored as soon as it is staged (wgmma-queue:4: 4 buffers of
# 4 KiB, four stages; :5: 8 buffers, three stages), beside :3 (whole 8 KiB boxes) and cuBLAS:
# 2048 x 2048 x k at k = 16 (the store path alone) and 128 (checked), and the other attention
# batches, 1 024 members, bf16.
set -u
cd .gpu && xz -dc run/host.xz > host && chmod +x host && cd ..
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant'; }
echo "== k=16 (no check)"
timeout 100 .gpu/host --variant wgmma-queue:3,wgmma-queue:4,wgmma-queue:5 --compare cublas --dtype bf16 --m 2048 --n 2048 --k 16 --batch 1024 --seed 1 --no-check 2>&1 | tee -a $OUT/narrow.log | row
echo "== k=128"
timeout 150 .gpu/host --variant wgmma-queue:3,wgmma-queue:4,wgmma-queue:5 --compare cublas --dtype bf16 --m 2048 --n 2048 --k 128 --batch 1024 --seed 1 2>&1 | tee -a $OUT/narrow.log | row
for shape in "2048 128 2048" "512 512 64" "128 128 128"; do
  set -- $shape
  echo "== m=$1 n=$2 k=$3 (no check)"
  timeout 100 .gpu/host --variant wgmma-queue:3,wgmma-queue:4,wgmma-queue:5 --compare cublas --dtype bf16 --m $1 --n $2 --k $3 --batch 1024 --seed 1 --no-check 2>&1 | tee -a $OUT/narrow.log | row
done
