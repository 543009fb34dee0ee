#!/bin/bash
# wgmma-fp8-block:11 (:8 walking a masked layout's tiles below the counts, packed): GPU tests,
# compute-sanitizer, DeepGEMM's masked sets (:8 and :11 in one process, the cuBLASLt loop
# beside them; auto), and :8's dense path against the build before (host-main).
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
for v in host-main host-new tests-gpu; do xz -dc run/$v.xz > /tmp/$v && chmod +x /tmp/$v; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
for t in grouped_fp8_gemms_match_the_f64_reference strided_batches_match_the_f64_reference; do
  timeout 200 /tmp/tests-gpu --exact $t --test-threads 1 --nocapture 2>&1 | grep -E "^test |test result|panicked|FAIL|rror|Masked|Contiguous" | head -20
done | tee $L/tests.log
S=/usr/local/cuda-13.0/bin/compute-sanitizer
for tool in memcheck racecheck; do
  echo "== $tool :11 masked"
  timeout 200 $S --tool $tool /tmp/host-new --variant wgmma-fp8-block:11 --dtype e4m3 --scaling block --transa t --m 520 --k 1008 --groups 3 --group-m 256 --masked --iters 1 --warmup 0 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL|counts" | head -5
done | tee $L/sanitize.log
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch|counts' | grep -v '^| variant' | cut -c1-170; }
for r in 1 2; do
for s in "4096 7168" "7168 2048"; do
  set -- $s
  for gm in "1 1024" "2 512" "4 256"; do
    echo "== r$r masked m=$1 k=$2 groups=${gm% *} group-m=${gm#* } seed=$r"
    timeout 90 /tmp/host-new --variant wgmma-fp8-block:8,wgmma-fp8-block:11,auto --compare cublas --dtype e4m3 --scaling block --transa t --m $1 --k $2 --groups ${gm% *} --group-m ${gm#* } --masked --seed $r --cold --clock kernels --iters 30 --no-check 2>&1 | row
  done
done
done | tee $L/masked.log
for v in host-main host-new host-main host-new; do
  echo "== $v dense :8"
  timeout 60 /tmp/$v --variant wgmma-fp8-block:8 --compare cublas --dtype e4m3 --scaling block --transa t --m 4096 --n 4096 --k 7168 --seed 1 --no-check 2>&1 | row
done | tee $L/dense.log
tar czf $OUT/logs.tgz -C $OUT logs
