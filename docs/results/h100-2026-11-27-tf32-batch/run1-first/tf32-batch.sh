#!/bin/bash
# TF32 / 3xTF32 strided batches: checks, then speed beside cuBLAS (SGEMM and TF32 strided
# batched), then single problems with the build before (host-base) and this one.
cd "$(dirname "$0")/.."
for f in host host-base tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
./tests-gpu strided_batches_match_the_f64_reference --nocapture > $OUT/batch-test.log 2>&1
grep -E "test result|panicked|wgmma-(3x)?tf32" $OUT/batch-test.log | head -20
timeout 200 compute-sanitizer --tool memcheck ./tests-gpu strided_batches_match_the_f64_reference > $OUT/batch-sanitize.log 2>&1
grep -E "ERROR SUMMARY|test result" $OUT/batch-sanitize.log | tail -2
for shape in 2048x2048x128 2048x128x2048 512x512x64 128x128x128; do
  set -- ${shape//x/ }
  echo "== $shape tf32 kernels, batch=1024"
  ./host --variant wgmma-tf32:1,wgmma-tf32:2,wgmma-tf32:3,wgmma-tf32:5,wgmma-3xtf32:1,wgmma-3xtf32:2,gemm128,best --compare cublas,cublas-tf32 --dtype f32 --m $1 --n $2 --k $3 --batch 1024 --no-check --seed 1 2>&1 | tee -a $OUT/batch-f32-$shape.log | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  for math in tf32 fp32-accurate; do
    echo "== $shape auto --math $math (checked)"
    ./host --variant auto --compare cublas,cublas-tf32 --dtype f32 --math $math --m $1 --n $2 --k $3 --batch 1024 --seed 1 2>&1 | tee -a $OUT/batch-auto-$shape.log | grep -E '^\| [a-z]|rror|FAIL' | grep -v '^| variant'
  done
done
for size in "--size 2048" "--size 4096" "--size 8192" "--m 8192 --n 8192 --k 1024"; do
  for h in host-base host; do
    echo "== single $h $size"
    ./$h --variant wgmma-tf32:1,wgmma-3xtf32:1 --compare cublas,cublas-tf32 --dtype f32 $size --no-check --seed 1 2>&1 | grep '^| [a-z]' | grep -v '^| variant'
  done
done | tee $OUT/single.log
