#!/bin/bash
# e4m3 strided batches with one scale per tensor (wgmma-fp8:2 on the grouped walk) beside
# cuBLASLt's strided batched FP8 matmul (promoting and fast-accumulation) in the same process;
# the checks and the sanitizer; then wgmma-fp8:2 and wgmma-fp8-block:6 on one problem against
# the build before (host-base), three alternating rounds.
cd "$(dirname "$0")/.."
for f in host host-base tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
./tests-gpu the_library_runs_fp8_with_its_scales --nocapture > $L/fp8-library-test.log 2>&1
grep -E "test result|panicked|batch of two" $L/fp8-library-test.log | head -5
B="--dtype e4m3 --transa t --seed 1"
timeout 120 compute-sanitizer --tool memcheck ./host --variant auto $B --m 136 --n 200 --k 384 --lda 400 --ldb 416 --batch 3 > $L/sanitize.log 2>&1
grep -E "ERROR SUMMARY|PASS|FAIL" $L/sanitize.log | tail -2
# Checked: a few members at each shape, every member against its f64 reference.
for shape in 2048x2048x128 2048x128x2048 512x512x64 128x128x128; do
  set -- ${shape//x/ }
  echo "== checked $shape, 4 members"
  ./host --variant auto --compare cublas,cublas-fast-accum $B --m $1 --n $2 --k $3 --batch 4 2>&1 | grep -E 'PASS|FAIL|rror' | cut -c1-160
done | tee $L/checked.log
# Timed: the attention-like problems.
for sc in 2048x2048x128x256 2048x128x2048x1024 512x512x64x1024 128x128x128x1024; do
  set -- ${sc//x/ }
  echo "== $1 x $2 x $3, $4 members"
  ./host --variant auto --compare cublas,cublas-fast-accum $B --m $1 --n $2 --k $3 --batch $4 --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/batch.log
# One problem, against the build before.
for round in 1 2 3; do
  for h in host-base host; do
    for s in "--size 4096 --variant wgmma-fp8 --tile 2" "--size 2048 --variant wgmma-fp8 --tile 2" "--m 8192 --n 8192 --k 1024 --variant wgmma-fp8 --tile 2" "--size 4096 --scaling block --variant wgmma-fp8-block --tile 6" "--m 6144 --n 4096 --k 4096 --variant auto"; do
      echo "== $h $s: $(./$h $B $s --no-check --iters 50 2>&1 | grep -oE 'median [0-9.]+ ms')"
    done
  done
done | tee $L/ab.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
