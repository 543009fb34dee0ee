#!/usr/bin/env bash
# Runs on the GPU machine (no Rust there): the host binary and test binaries built here were
# copied into .gpu/ by `cargo xtask gpu-bundle`. Usage: bash xtask/scripts/gpu-session.sh STEP…
# Logs go to $OUT (or ./gpu-out); the short tables come last.
set -uo pipefail
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export MATMUL_NUM_THREADS=${MATMUL_NUM_THREADS:-$(nproc)}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
host=.gpu/host
for step in "$@"; do
  case "$step" in
    tests)
      for t in .gpu/tests-*; do "$t" --nocapture 2>&1 | tee -a "$OUT/gpu-tests.log" | tail -5; done ;;
    foundation)
      $host --variant v0,v1,v3,v4,tiled:16,tiled:8 --both-dtypes --compare cublas --size 4096 2>&1 | tee "$OUT/foundation-4096.log" | tail -30
      $host --variant v0,v1,v3,v4,tiled:16,tiled:8 --both-dtypes --compare cublas --m 1000 --n 1023 --k 999 2>&1 | tee "$OUT/foundation-1000.log" | tail -16 ;;
    progression)
      $host --variant v0,v1,v2,v3,v4,v5,gemm64,gemm128,fynv,alc1,alc2,alc3 --both-dtypes --compare cublas --size 4096 2>&1 | tee "$OUT/progression-4096.log" | tail -32 ;;
    *) $host $step 2>&1 | tee -a "$OUT/misc.log" ;;
  esac
done
