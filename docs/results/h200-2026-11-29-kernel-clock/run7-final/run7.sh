#!/bin/bash
# The build as committed (L2 hints on the swapped kernels' loads, the bf16 stream-k tiles'
# producer at 56 registers): GPU tests, sanitizers, and DeepGEMM's dense set plus bf16 decode
# shapes by the kernels' clock, cold, one round.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-final2.xz > /tmp/host && chmod +x /tmp/host
xz -dc run/host-final.xz > /tmp/host-before && chmod +x /tmp/host-before
xz -dc run/tests-gpu.xz > /tmp/tests-gpu && chmod +x /tmp/tests-gpu
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
row() { grep -E '^\| [a-z]|rror|FAIL|panic|CUPTI' | grep -v '^| variant' | cut -c1-140; }
for t in every_variant_matches_the_reference_on_the_gpu the_fp8_kernels_match_the_reference_on_the_gpu the_kernels_clock_reads_less_than_the_events_around_them; do
  timeout 150 /tmp/tests-gpu --exact $t --test-threads 1 2>&1 | grep -E "^test |test result|panicked" | head -3
done > $L/tests.log 2>&1
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -1)
for tool in memcheck racecheck; do
  timeout 100 $CS --tool $tool /tmp/host --dtype bf16 --transa t --seed 3 --iters 1 --warmup 0 --variant wgmma-swap:248,wgmma-swap:164 --m 264 --n 72 --k 880 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" 
done > $L/sanitizer.log 2>&1
F="2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048 2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048"
for s in $F; do
  IFS=x read m n k <<< "$s"
  echo "== r1 kernels $s"
  timeout 40 /tmp/host --dtype e4m3 --transa t --scaling block --seed 1 --iters 30 --no-check --cold --clock kernels --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
done > $L/dense.log
for s in 2112x1x7168 2112x16x7168 2112x64x7168 4096x16x4096 4096x64x4096 6144x16x4096 7168x16x16384; do
  IFS=x read m n k <<< "$s"
  for h in host-before host; do
  echo "== bf16 $h $s"
  timeout 40 /tmp/$h --dtype bf16 --transa t --seed 1 --iters 30 --no-check --cold --clock kernels --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
done > $L/bf16.log
