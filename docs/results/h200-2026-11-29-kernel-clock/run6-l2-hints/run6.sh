#!/bin/bash
# L2 hints on the swapped kernels' loads (weights evict_first, tokens evict_last: host-hint)
# against none (host-final), builds alternating, kernels' clock, cold.
set -u
cd "$(dirname "$0")/.."
for h in host-final host-hint; do xz -dc run/$h.xz > /tmp/$h && chmod +x /tmp/$h; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
row() { grep -E '^\| [a-z]|rror|FAIL|panic|CUPTI' | grep -v '^| variant' | cut -c1-140; }
timeout 60 /tmp/host-hint --dtype e4m3 --transa t --scaling block --seed 3 --iters 2 --variant wgmma-fp8-block-swap:164,wgmma-fp8-block-swap:448 --m 2112 --n 64 --k 7168 --beta 0.5 2>&1 | grep -o "full f64 reference: PASS\|FAIL" > $L/check.log
for r in 1 2; do for h in host-final host-hint; do
for s in 2112x64x7168 4096x64x7168 7168x64x2048 7168x64x7168 7168x128x2048 4096x128x7168; do
  IFS=x read m n k <<< "$s"
  echo "== r$r $h e4m3 $s"
  timeout 60 /tmp/$h --dtype e4m3 --transa t --scaling block --seed 1 --iters 30 --no-check --cold --clock kernels --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
done
for s in 2112x16x7168 4096x16x4096 2112x64x7168; do
  IFS=x read m n k <<< "$s"
  echo "== r$r $h bf16 $s"
  timeout 60 /tmp/$h --dtype bf16 --transa t --seed 1 --iters 30 --no-check --cold --clock kernels --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
done
done; done > $L/hint.log
