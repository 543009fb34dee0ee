#!/bin/bash
# The ping-pong configuration (wgmma-fp8:4, 128-row tiles, one warpgroup's epilogue under the
# other's mainloop) on the per-tensor batches beside :2 and cuBLASLt's strided batched FP8
# matmul; checked at four members; :4 on one problem against the build before.
cd "$(dirname "$0")/.."
for f in host host-base; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs2; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --seed 1"
timeout 120 compute-sanitizer --tool memcheck ./host --variant wgmma-fp8 --tile 4 $B --m 136 --n 200 --k 384 --lda 400 --ldb 416 --batch 3 > $L/sanitize.log 2>&1
grep -E "ERROR SUMMARY|PASS|FAIL" $L/sanitize.log | tail -2
for shape in 2048x2048x128 128x128x128; do
  set -- ${shape//x/ }
  echo "== checked $shape, 4 members"
  ./host --variant wgmma-fp8 --tile 4 $B --m $1 --n $2 --k $3 --batch 4 2>&1 | grep -E 'PASS|FAIL|rror' | cut -c1-120
done | tee $L/checked.log
for round in 1 2; do
for sc in 2048x2048x128x256 2048x128x2048x1024 512x512x64x1024 128x128x128x1024; do
  set -- ${sc//x/ }
  echo "== $1 x $2 x $3, $4 members"
  ./host --variant wgmma-fp8:2,wgmma-fp8:4 --compare cublas $B --m $1 --n $2 --k $3 --batch $4 --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done
done | tee $L/batch.log
for round in 1 2 3; do
  for h in host-base host; do
    for s in "--size 4096" "--size 2048" "--m 8192 --n 8192 --k 1024"; do
      echo "== $h wgmma-fp8:4 $s: $(./$h $B $s --variant wgmma-fp8 --tile 4 --no-check --iters 50 2>&1 | grep -oE 'median [0-9.]+ ms')"
    done
  done
done | tee $L/ab.log
tar czf $OUT/logs2.tgz -C $OUT logs2 && rm -rf $L
