#!/bin/bash
# DeepGEMM's dense set with `auto` on the final build, checked, beside cuBLASLt's block-scaled
# matmul in the same process.
cd "$(dirname "$0")/.."
xz -d -T8 -c run/host.xz > host && chmod +x host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
for s in 2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048 \
         2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 \
         2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048; do
  set -- ${s//x/ }
  echo "== $1 x $2 x $3"
  timeout 60 ./host --variant auto --compare cublas $B --m $1 --n $2 --k $3 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/dense.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
