#!/bin/bash
# The masked layout's packed walk: the grouped and batched GPU tests, then main's build
# (host-main) and the packed walk's (host-packed) alternating at DeepGEMM's masked sets,
# e4m3 block-scaled and bf16, cold, against the loop of cuBLASLt / cuBLAS calls; and two dense
# problems on grouped-capable kernels, for what the walk's branch costs them.
set -u
cd "$(dirname "$0")/.."
for v in host-main host-packed tests-gpu; do xz -dc run/$v.xz > /tmp/$v && chmod +x /tmp/$v; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
for t in grouped_fp8_gemms_match_the_f64_reference grouped_gemms_match_the_f64_reference strided_batches_match_the_f64_reference; do
  timeout 150 /tmp/tests-gpu --exact $t --test-threads 1 2>&1 | grep -E "^test |test result|panicked|FAIL|rror" | head -5
done | tee $L/tests.log
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch|counts' | grep -v '^| variant' | cut -c1-150; }
for s in "4096 7168" "7168 2048"; do
  set -- $s
  for gm in "1 1024" "2 512" "4 256"; do
    for d in e4m3 bf16; do
      case $d in e4m3) X="--dtype e4m3 --scaling block";; bf16) X="--dtype bf16";; esac
      for v in host-main host-packed; do
        echo "== r1 $v $d masked m=$1 k=$2 groups=${gm% *} group-m=${gm#* }"
        timeout 60 /tmp/$v --variant auto --compare cublas $X --transa t --m $1 --k $2 --groups ${gm% *} --group-m ${gm#* } --masked --seed 1 --cold --iters 30 --no-check 2>&1 | row
      done
    done
  done
done | tee $L/masked.log
for v in host-main host-packed host-main host-packed; do
  echo "== $v dense"
  timeout 60 /tmp/$v --variant wgmma-fp8-block:8 --compare cublas --dtype e4m3 --scaling block --transa t --m 4096 --n 4096 --k 7168 --seed 1 --no-check 2>&1 | row
  timeout 60 /tmp/$v --variant wgmma-layouts:2 --compare cublas --dtype bf16 --transa t --m 6144 --n 4096 --k 4096 --seed 1 --no-check 2>&1 | row
done | tee $L/dense.log
tar czf $OUT/logs.tgz -C $OUT logs
