#!/bin/bash
# wgmma-fp8-block:8 (:6 with each slice's scales staged in shared memory by the producer
# warpgroup's other threads) beside :6, :7 and cuBLASLt's block-scaled matmul.
cd "$(dirname "$0")/.."
for f in host tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
timeout 120 compute-sanitizer --tool memcheck ./host --variant wgmma-fp8-block --tile 8 $B --m 264 --n 392 --k 1000 > $L/sanitize.log 2>&1
grep -E "ERROR SUMMARY|PASS|FAIL" $L/sanitize.log | tail -2
for s in "--m 2112 --n 4096 --k 7168" "--m 7168 --n 128 --k 2048" "--m 1000 --n 520 --k 1304"; do
  ./host --variant wgmma-fp8-block:6,wgmma-fp8-block:8 $B $s 2>&1 | grep -E 'PASS|FAIL|rror' | cut -c1-110
done | tee $L/checked.log
for round in 1 2; do
for s in 2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048 8192x8192x8192 24576x128x1536 32768x128x512 7168x128x2048; do
  set -- ${s//x/ }
  echo "== $1 x $2 x $3"
  timeout 100 ./host --variant wgmma-fp8-block:6,wgmma-fp8-block:8,wgmma-fp8-block:7 --compare cublas $B --m $1 --n $2 --k $3 --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done
done | tee $L/dense.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
