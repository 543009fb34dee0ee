#!/bin/bash
# The final build: the GPU tests that run the FP8 kernels (auto's new swapped tiles among them),
# the library's FP8 path and graphs, and --cold's own test; auto's picks at the decode shapes
# checked.
set -u
cd "$(dirname "$0")/.."
for f in host-final tests-gpu; do xz -dc run/$f.xz > /tmp/$f && chmod +x /tmp/$f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
timeout 400 /tmp/tests-gpu --test-threads 1 --nocapture fp8 cold plans_enqueue > $L/tests.log 2>&1
grep -E "^test |test result|cold:" $L/tests.log
B="--dtype e4m3 --transa t --scaling block --seed 1 --cold"
for s in 1024x64x7168 7168x64x16384 7168x128x2048 4096x128x7168; do
  IFS=x read m n k <<< "$s"
  timeout 60 /tmp/host-final $B --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-130
done | tee $L/checked.log
tar czf $OUT/logs.tgz -C $OUT logs
