#!/bin/bash
# The store path's ceiling: wgmma-16bit:1 (C stored from the registers, st.global) beside
# wgmma-queue:3 (TMA store) and cuBLAS at k = 16 and 128, 1 024 members of 2048 x 2048.
set -u
cd .gpu && xz -dc run/host.xz > host && chmod +x host && cd ..
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant'; }
for k in 16 128; do
  echo "== batch 1024 m=2048 n=2048 k=$k"
  timeout 150 .gpu/host --variant wgmma-16bit:1,wgmma-queue:3 --compare cublas --dtype bf16 --m 2048 --n 2048 --k $k --batch 1024 --seed 1 --no-check 2>&1 | tee -a $OUT/regstore.log | row
done
