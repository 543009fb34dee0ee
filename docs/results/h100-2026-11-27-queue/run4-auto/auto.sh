#!/bin/bash
# auto over the attention batches with the final rule (wgmma-queue:3 from 1 024 tiles), N,N and
# T,N, beside cuBLAS.
cd .gpu && xz -dc run/host.xz > host && chmod +x host && cd ..
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for shape in "2048 2048 128" "2048 128 2048" "512 512 64" "128 128 128"; do
  set -- $shape
  for t in n t; do
    echo "== auto batch 1024 m=$1 n=$2 k=$3 transa=$t"
    timeout 120 .gpu/host --variant auto --compare cublas --dtype bf16 --transa $t --m $1 --n $2 --k $3 --batch 1024 --seed 1 2>&1 | tee -a $OUT/batch-auto.log | grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant'
  done
done
