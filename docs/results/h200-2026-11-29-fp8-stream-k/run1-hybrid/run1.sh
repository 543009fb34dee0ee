#!/bin/bash
# Stream-k tiles of the swapped block-scaled kernel (:432, :448, :464) beside its one-wave
# tiles, cold, DeepGEMM's dense set at 64 and 128 tokens; checks and memcheck first.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-sk.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
S=wgmma-fp8-block-swap
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant' | cut -c1-120; }
for s in 2112x64x7168 1000x72x4160 4096x128x7168 264x40x1408; do
  IFS=x read m n k <<< "$s"
  echo "== $s"
  timeout 120 /tmp/host $B --iters 3 --variant $S:432,$S:448,$S:464 --epilogue bias,gelu,amax --beta 0.5 --m $m --n $n --k $k 2>&1 | row
done | tee $L/check.log
timeout 300 compute-sanitizer --tool memcheck /tmp/host $B --iters 1 --variant $S:464,$S:432 --m 2112 --n 64 --k 1024 2>&1 | tail -4 > $L/memcheck.log
for r in 1 2; do
for s in 2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048 \
         2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048; do
  IFS=x read m n k <<< "$s"
  v="auto,$S:116,$S:132,$S:164,$S:432,$S:448,$S:464"
  [ $n = 128 ] && v="$v,$S:32,$S:56"
  echo "== $r $s"
  timeout 120 /tmp/host $B --iters 30 --cold --no-check --variant $v --compare cublas --m $m --n $n --k $k 2>&1 | row
done
done | tee $L/tiles.log
tar czf $OUT/logs.tgz -C $OUT logs
