#!/bin/bash
# wgmma-fp8-block:11 walking every layout the packed way (one walk, no branch between two):
# GPU tests, compute-sanitizer in both layouts, DeepGEMM's masked sets (:8 and :11 in one
# process, auto, the cuBLASLt loop; three seeds), the contiguous sets and two dense problems
# (:8 / :9 beside :11).
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
for v in host-new tests-gpu; do xz -dc run/$v.xz > /tmp/$v && chmod +x /tmp/$v; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
for t in grouped_fp8_gemms_match_the_f64_reference strided_batches_match_the_f64_reference; do
  timeout 200 /tmp/tests-gpu --exact $t --test-threads 1 --nocapture 2>&1 | grep -E "^test |test result|panicked|FAIL|Masked|Contiguous|fp8" | head -24
done | tee $L/tests.log
S=/usr/local/cuda-13.0/bin/compute-sanitizer
for lay in "--groups 3 --group-m 256 --masked" "--groups 3 --group-m 256"; do
for tool in memcheck racecheck; do
  echo "== $tool :11 $lay"
  timeout 200 $S --tool $tool /tmp/host-new --variant wgmma-fp8-block:11 --dtype e4m3 --scaling block --transa t --m 520 --k 1008 $lay --iters 1 --warmup 0 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL|counts" | head -5
done; done | tee $L/sanitize.log
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch|counts' | grep -v '^| variant' | cut -c1-170; }
for r in 1 2 3; do
for s in "4096 7168" "7168 2048"; do
  set -- $s
  for gm in "1 1024" "2 512" "4 256"; do
    echo "== r$r masked m=$1 k=$2 groups=${gm% *} group-m=${gm#* } seed=$r"
    timeout 90 /tmp/host-new --variant wgmma-fp8-block:8,wgmma-fp8-block:11,auto --compare cublas --dtype e4m3 --scaling block --transa t --m $1 --k $2 --groups ${gm% *} --group-m ${gm#* } --masked --seed $r --cold --clock kernels --iters 30 --no-check 2>&1 | row
  done
done
done | tee $L/masked.log
for s in "4096 7168" "7168 2048"; do
  set -- $s
  for gm in "4 8192" "8 4096"; do
    echo "== contiguous m=$1 k=$2 groups=${gm% *} group-m=${gm#* }"
    timeout 120 /tmp/host-new --variant wgmma-fp8-block:9,wgmma-fp8-block:8,wgmma-fp8-block:11 --dtype e4m3 --scaling block --transa t --m $1 --k $2 --groups ${gm% *} --group-m ${gm#* } --seed 1 --iters 10 --no-check 2>&1 | row
  done
done | tee $L/contiguous.log
for r in 1 2; do
  for s in "4096 4096 7168" "7168 1024 2048"; do
    set -- $s
    echo "== r$r dense $1 $2 $3"
    timeout 60 /tmp/host-new --variant wgmma-fp8-block:8,wgmma-fp8-block:11,wgmma-fp8-block:8,wgmma-fp8-block:11 --compare cublas --dtype e4m3 --scaling block --transa t --m $1 --n $2 --k $3 --seed 1 --no-check 2>&1 | row
  done
done | tee $L/dense.log
tar czf $OUT/logs.tgz -C $OUT logs
