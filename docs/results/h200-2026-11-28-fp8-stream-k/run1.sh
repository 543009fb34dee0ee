#!/bin/bash
# wgmma-fp8-block:10 (:9 on the skeleton's hybrid stream-k grid) beside :8, :9, auto and
# cuBLASLt's block-scaled matmul: sanitizer, checked edges, DeepGEMM's dense set, squares.
cd "$(dirname "$0")/.."
for f in host tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
timeout 150 compute-sanitizer --tool memcheck ./host --variant wgmma-fp8-block --tile 10 $B --m 1000 --n 392 --k 1008 > $L/sanitize10.log 2>&1
grep -E "ERROR SUMMARY|PASS|FAIL" $L/sanitize10.log | tail -2
timeout 150 compute-sanitizer --tool racecheck ./host --variant wgmma-fp8-block --tile 10 $B --m 1000 --n 392 --k 1008 > $L/racecheck10.log 2>&1
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASS|FAIL" $L/racecheck10.log | tail -2
for s in "--m 4096 --n 4096 --k 7168" "--m 7168 --n 128 --k 16384" "--m 1000 --n 520 --k 1312" "--m 2112 --n 64 --k 7168"; do
  timeout 100 ./host --variant wgmma-fp8-block:9,wgmma-fp8-block:10 --compare cublas $B $s 2>&1 | grep -E 'PASS|FAIL|rror' | cut -c1-120
done | tee $L/checked.log
for s in 2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048 8192x8192x8192 6144x6144x6144 8192x8192x1024 \
         2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 \
         2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048; do
  set -- ${s//x/ }
  echo "== $1 x $2 x $3"
  timeout 60 ./host --variant auto,wgmma-fp8-block:8,wgmma-fp8-block:9,wgmma-fp8-block:10 --compare cublas $B --m $1 --n $2 --k $3 --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/dense.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
