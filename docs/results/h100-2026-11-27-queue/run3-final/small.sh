#!/bin/bash
# 128^3 members (one tile each): the static wgmma-layouts:2 beside wgmma-queue:3, three times.
cd .gpu && xz -dc run/host.xz > host && chmod +x host && cd ..
for i in 1 2 3; do
  timeout 60 .gpu/host --variant wgmma-layouts:2,wgmma-queue:3,wgmma-queue:2 --compare cublas --dtype bf16 --m 128 --n 128 --k 128 --batch 1024 --seed 1 2>&1 | tee -a $OUT/small.log | grep -E '^\| [a-z]' | grep -v '^| variant'
done
