#!/bin/bash
# C stored by the warpgroup's threads (wgmma-queue:4: :3 with st.global from the whole-tile
# staging; :5: two buffers, four stages) beside the TMA store (:3) and cuBLAS, 2048 x 2048 x k,
# 1 024 members, bf16: k = 16 (the store path alone) unchecked, k = 128 checked, and the other
# attention shapes.
set -u
cd .gpu && xz -dc run/host.xz > host && chmod +x host && cd ..
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant'; }
echo "== k=16 (no check)"
timeout 100 .gpu/host --variant wgmma-queue:3,wgmma-queue:4,wgmma-queue:5 --compare cublas --dtype bf16 --m 2048 --n 2048 --k 16 --batch 1024 --seed 1 --no-check 2>&1 | tee -a $OUT/threads.log | row
echo "== k=128"
timeout 150 .gpu/host --variant wgmma-queue:3,wgmma-queue:4,wgmma-queue:5 --compare cublas --dtype bf16 --m 2048 --n 2048 --k 128 --batch 1024 --seed 1 2>&1 | tee -a $OUT/threads.log | row
for shape in "2048 128 2048" "512 512 64" "128 128 128"; do
  set -- $shape
  echo "== m=$1 n=$2 k=$3 (no check)"
  timeout 100 .gpu/host --variant wgmma-queue:3,wgmma-queue:4,wgmma-queue:5 --compare cublas --dtype bf16 --m $1 --n $2 --k $3 --batch 1024 --seed 1 --no-check 2>&1 | tee -a $OUT/threads.log | row
done
