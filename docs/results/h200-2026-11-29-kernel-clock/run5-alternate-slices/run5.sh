#!/bin/bash
# Two consumer warpgroups taking alternate slices of a 64-token tile (`:5xx`) against one
# warpgroup on the whole tile (`:1xx`) and the stream-k tiles, kernels' clock, cold; checks and
# compute-sanitizer on the new tiles.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-alt.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
row() { grep -E '^\| [a-z]|rror|FAIL|panic|CUPTI' | grep -v '^| variant' | cut -c1-140; }
for t in 532 548 564; do for s in 264x72x880 2112x64x7168 7168x64x2048 1000x64x1152; do
  IFS=x read m n k <<< "$s"
  echo "== check :$t $s"
  timeout 60 /tmp/host --dtype e4m3 --transa t --scaling block --seed 3 --iters 2 --variant wgmma-fp8-block-swap:$t --m $m --n $n --k $k --beta 0.5 --epilogue bias,gelu,amax 2>&1 | grep -E "check:|rror" | grep -o "PASS\|FAIL\|rror.*" | head -2
done; done > $L/check.log 2>&1
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -1)
for tool in memcheck racecheck; do
  timeout 200 $CS --tool $tool /tmp/host --dtype e4m3 --transa t --scaling block --seed 3 --iters 1 --warmup 0 --variant wgmma-fp8-block-swap:564,wgmma-fp8-block-swap:532 --m 264 --n 72 --k 880 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|check:" | cut -c1-120
done > $L/sanitizer.log 2>&1
V=wgmma-fp8-block-swap:116,wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:164,wgmma-fp8-block-swap:448,wgmma-fp8-block-swap:532,wgmma-fp8-block-swap:548,wgmma-fp8-block-swap:564
for r in 1 2; do
for s in 2112x64x7168 4096x64x7168 7168x64x2048 7168x64x16384 7168x64x7168 24576x64x1536 32768x64x512 1024x64x7168 2112x64x2048; do
  IFS=x read m n k <<< "$s"
  echo "== r$r $s"
  timeout 120 /tmp/host --dtype e4m3 --transa t --scaling block --seed 1 --iters 30 --no-check --cold --clock kernels --variant $V,auto --compare cublas --m $m --n $n --k $k 2>&1 | row
done; done > $L/tiles.log
