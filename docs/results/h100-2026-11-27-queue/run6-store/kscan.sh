#!/bin/bash
# Is 2048x2048xK (1 024 members, bf16) bound by the write of C? wgmma-queue:3 and cuBLAS as k
# shrinks and grows: if our time stays where it is as k halves, the store path is the limit.
set -u
cd .gpu && xz -dc run/host.xz > host && chmod +x host && cd ..
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant'; }
for k in 16 32 64 128 256; do
  echo "== batch 1024 m=2048 n=2048 k=$k"
  timeout 150 .gpu/host --variant wgmma-queue:3,wgmma-queue:1 --compare cublas --dtype bf16 --m 2048 --n 2048 --k $k --batch 1024 --seed 1 2>&1 | tee -a $OUT/kscan.log | row
done
