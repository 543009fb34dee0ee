#!/bin/bash
# HEAD's build (host-head), the race fix (host: `Consumer::finish_loads`, bar.warp.sync before
# lane 0's release in the TF32 and block-scaled kernels) and, where present, the fix with the
# warpgroup index broadcast in the skeleton's Consumer (host-b): the three builds
# alternating, and DeepGEMM's dense set with `auto` (run1.sh: racecheck and checks).
cd "$(dirname "$0")/.."
for f in host host-head host-b; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
R="--iters 1 --warmup 0"
for round in 1 2; do
for h in host-head host host-b; do
  [ -f $h ] || continue
  for s in "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m 4096 --n 4096 --k 7168" \
           "$B --variant wgmma-fp8-block:9 --m 8192 --n 8192 --k 8192" \
           "$B --variant wgmma-fp8-block:10 --m 7168 --n 128 --k 16384" \
           "$B --variant wgmma-fp8-block-swap:132 --m 2112 --n 64 --k 7168" \
           "--variant wgmma-tf32:1,wgmma-3xtf32:1 --size 8192" \
           "--variant wgmma-tf32:1,wgmma-3xtf32:1 --size 4096" \
           "--dtype bf16 --variant auto --size 8192" \
           "--dtype bf16 --variant auto --m 6144 --n 4096 --k 4096" \
           "--dtype bf16 --variant wgmma-stream-k --m 4096 --n 4096 --k 4096" \
           "--dtype bf16 --variant auto --m 2048 --n 2048 --k 128 --batch 1024"; do
    echo "== $round $h $s"
    timeout 60 ./$h $s --compare cublas --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done
done | tee $L/before-after.log
for s in 2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048 \
         2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 \
         2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048; do
  set -- ${s//x/ }
  echo "== $1 x $2 x $3"
  timeout 60 ./host --variant auto --compare cublas $B --m $1 --n $2 --k $3 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/dense.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
