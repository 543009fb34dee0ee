#!/bin/bash
# bf16 wgmma-swap's stream-k tiles (:232/:248/:264) as a hybrid stream-k grid (host-sk2) and in
# equal parts (host-eq), in turn, cold; then the FP8 swapped tiles at 1024-2112 rows (host-eq).
set -u
cd "$(dirname "$0")/.."
for h in host-sk2 host-eq; do xz -dc run/$h.xz > /tmp/$h && chmod +x /tmp/$h; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant' | cut -c1-120; }
W=wgmma-swap
for s in 2112x64x7168 1024x64x4096 2112x1x4096 2112x16x7168 1024x128x4096 2112x64x2048; do
  IFS=x read m n k <<< "$s"
  echo "== check $s"; timeout 120 /tmp/host-eq --dtype bf16 --transa t --seed 1 --iters 3 --variant $W:232,$W:248,$W:264 --m $m --n $n --k $k 2>&1 | row
done > $L/bf16-check.log
for r in 1 2; do for h in host-sk2 host-eq; do
for s in 2112x64x7168 1024x64x4096 2112x1x4096 2112x16x7168 1024x128x4096 2112x64x2048; do
  IFS=x read m n k <<< "$s"
  echo "== $r $h $s"
  timeout 120 /tmp/$h --dtype bf16 --transa t --seed 1 --iters 30 --cold --no-check --variant auto,$W:232,$W:248,$W:264,$W:116,$W:132 --compare cublas --m $m --n $n --k $k 2>&1 | row
done; done; done | tee $L/bf16.log
S=wgmma-fp8-block-swap
for r in 1 2; do
for s in 2112x64x1024 2112x64x2048 2112x64x4096 1024x64x7168 1536x64x7168 1024x128x7168 1536x128x7168 2112x128x2048 3072x64x7168; do
  IFS=x read m n k <<< "$s"
  v="auto,$S:116,$S:132,$S:164,$S:432,$S:448,$S:464"
  [ $n = 128 ] && v="$v,$S:16,$S:32"
  echo "== $r $s"
  timeout 120 /tmp/host-eq --dtype e4m3 --transa t --scaling block --seed 1 --iters 30 --cold --no-check --variant $v --compare cublas --m $m --n $n --k $k 2>&1 | row
done; done | tee $L/fp8.log
tar czf $OUT/logs.tgz -C $OUT logs
