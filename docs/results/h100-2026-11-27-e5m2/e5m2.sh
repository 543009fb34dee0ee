#!/bin/bash
# B in e5m2 (--dtype e4m3-e5m2): the probe of the accumulation (both formats), the FP8 GPU test
# (every kernel, e4m3 and e5m2), compute-sanitizer, then wgmma-fp8 and auto against cuBLASLt's
# e4m3 x e5m2 matmul in the same process, beside the same run in e4m3 x e4m3.
set -u
cd .gpu && for b in host tests-gpu; do xz -dc run/$b.xz > $b && chmod +x $b; done && cd ..
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic' | grep -v '^| variant'; }
echo "== GPU tests: the probe (B e4m3, e5m2), every FP8 kernel"
timeout 240 .gpu/tests-gpu fp8_wgmma_accumulates the_fp8_kernels_match --test-threads 1 --nocapture > $OUT/gpu-test.log 2>&1
grep -E "^== B|fraction_bits: 1[234], truncate: true|differ between|^test |result|panicked" $OUT/gpu-test.log | head -30
grep -c "B E5m2" $OUT/gpu-test.log
echo "== compute-sanitizer (memcheck, racecheck) on wgmma-fp8:2 and :5 with B in e5m2"
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool --print-limit 5 .gpu/host --variant wgmma-fp8:2,wgmma-fp8:5 --dtype e4m3-e5m2 --transa t --m 520 --n 264 --k 384 --iters 1 --warmup 0 > $OUT/sanitize-$tool.log 2>&1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\| wgmma" $OUT/sanitize-$tool.log
done
for dtype in e4m3-e5m2 e4m3; do
  for shape in "--size 2048" "--size 4096" "--size 8192" "--m 8192 --n 8192 --k 1024"; do
    echo "== $dtype $shape"
    timeout 120 .gpu/host --variant wgmma-fp8:1,wgmma-fp8:2,wgmma-fp8:5,auto --compare cublas --dtype $dtype --transa t $shape --seed 1 2>&1 | tee -a $OUT/timing-$dtype.log | row
  done
done
