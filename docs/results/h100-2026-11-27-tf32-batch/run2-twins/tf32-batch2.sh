#!/bin/bash
# TF32 / 3xTF32 strided batches, the committed code: GPU tests (batches, the contract with a
# batch whose members span the range the opposite ways), memcheck, auto on the attention
# batches under each f32 contract beside cuBLAS (SGEMM and TF32 strided batched), then single
# problems with the build before the batch (host-base) and this one.
cd "$(dirname "$0")/.."
for f in host host-base tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
./tests-gpu strided_batches_match_the_f64_reference fp32_accurate_keeps_its_contract --nocapture > $L/tests.log 2>&1
grep -E "test result|panicked|members \|" $L/tests.log | head -20
timeout 240 compute-sanitizer --tool memcheck ./tests-gpu strided_batches_match_the_f64_reference > $L/sanitize.log 2>&1
grep -E "ERROR SUMMARY|test result" $L/sanitize.log | tail -2
for shape in 2048x2048x128 2048x128x2048 512x512x64 128x128x128; do
  set -- ${shape//x/ }
  for math in fp32-accurate tf32; do
    echo "== $shape auto --math $math, batch=1024"
    ./host --variant auto --compare cublas,cublas-tf32 --dtype f32 --math $math --m $1 --n $2 --k $3 --batch 1024 --seed 1 2>&1 | tee -a $L/batch-auto-$shape.log | grep -E '^\| [a-z]|rror|FAIL' | grep -v '^| variant'
  done
done
for size in "--size 2048" "--size 4096" "--m 8192 --n 8192 --k 1024"; do
  for round in 1 2; do for h in host-base host; do
    echo "== single $h $size round $round"
    ./$h --variant wgmma-tf32:1,wgmma-3xtf32:1,wgmma-3xtf32:2 --compare cublas --dtype f32 $size --no-check --seed 1 2>&1 | grep '^| [a-z]' | grep -v '^| variant'
  done; done
done | tee $L/single.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
