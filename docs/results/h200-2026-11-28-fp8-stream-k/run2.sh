#!/bin/bash
# Why :10 lost at 4096 tokens: the data-parallel waves alone (shapes of whole waves of 192 x 128
# tiles), and :11 (:10 with a 40-register producer, no producer spills) beside :9 and :10; the
# swapped kernel at the two long-k decode shapes where :10 won.
cd "$(dirname "$0")/.."
for f in host tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
for s in 2112x1536x7168 2112x3072x7168 4096x4096x7168 8192x8192x1024 7168x4096x2048 7168x4096x16384; do
  set -- ${s//x/ }
  echo "== $1 x $2 x $3"
  timeout 60 ./host --variant wgmma-fp8-block:9,wgmma-fp8-block:10,wgmma-fp8-block:11 --compare cublas $B --m $1 --n $2 --k $3 --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/waves.log
for s in 7168x64x16384 7168x128x16384; do
  set -- ${s//x/ }
  echo "== $1 x $2 x $3"
  timeout 60 ./host --variant wgmma-fp8-block:8,wgmma-fp8-block:10,wgmma-fp8-block:11,wgmma-fp8-block-swap:56,wgmma-fp8-block-swap:156,wgmma-fp8-block-swap:32 --compare cublas $B --m $1 --n $2 --k $3 --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/decode.log
timeout 100 ./host --variant wgmma-fp8-block:11 --compare cublas $B --m 1000 --n 520 --k 1312 2>&1 | grep -E 'PASS|FAIL|rror' | cut -c1-120 | tee $L/checked.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
