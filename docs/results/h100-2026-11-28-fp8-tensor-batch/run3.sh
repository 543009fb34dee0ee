#!/bin/bash
# wgmma-fp8:6 (the block kernel's two-consumer skeleton with one scale per tensor, 128 x 128
# tiles) on the per-tensor batches beside :2 and cuBLASLt's strided batched FP8 matmul; checked
# at four members, the sanitizer; :6 on one problem beside :2.
cd "$(dirname "$0")/.."
for f in host tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs3; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --seed 1"
timeout 100 compute-sanitizer --tool memcheck ./host --variant wgmma-fp8 --tile 6 $B --m 136 --n 200 --k 384 --lda 400 --ldb 416 --batch 3 > $L/sanitize.log 2>&1
grep -E "ERROR SUMMARY|PASS|FAIL" $L/sanitize.log | tail -2
for shape in 2048x2048x128 512x512x64 128x128x128; do
  set -- ${shape//x/ }
  echo "== checked $shape, 2 members e4m3-e5m2, 4 e4m3"
  ./host --variant wgmma-fp8 --tile 6 --dtype e4m3-e5m2 --transa t --seed 1 --m $1 --n $2 --k $3 --batch 2 2>&1 | grep -E 'PASS|FAIL|rror' | cut -c1-100
  ./host --variant wgmma-fp8 --tile 6 $B --m $1 --n $2 --k $3 --batch 4 2>&1 | grep -E 'PASS|FAIL|rror' | cut -c1-100
done | tee $L/checked.log
for round in 1 2; do
for sc in 2048x2048x128x256 2048x128x2048x1024 512x512x64x1024 128x128x128x1024; do
  set -- ${sc//x/ }
  echo "== $1 x $2 x $3, $4 members"
  ./host --variant wgmma-fp8:2,wgmma-fp8:6 --compare cublas $B --m $1 --n $2 --k $3 --batch $4 --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done
done | tee $L/batch.log
for s in "--size 4096" "--size 2048" "--m 8192 --n 8192 --k 1024"; do
  echo "== $s"
  ./host --variant wgmma-fp8:2,wgmma-fp8:6 --compare cublas-fast-accum $B $s --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/one.log
tar czf $OUT/logs3.tgz -C $OUT logs3 && rm -rf $L
