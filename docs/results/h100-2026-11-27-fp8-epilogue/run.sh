#!/usr/bin/env bash
# FP8's fused epilogue and the library's FP8 batch on the H100: tests, sanitizer, timings; the
# FP8 kernels without an epilogue against the build before (host-base).
set -uo pipefail
R=.gpu/run
mkdir -p $OUT/logs
L=$OUT/logs
for f in host host-base tests-gpu; do xz -d -c $R/$f.xz > $R/$f && chmod +x $R/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee $L/gpu.txt
timeout 400 $R/tests-gpu fp8 --nocapture --test-threads 1 > $L/fp8-tests.log 2>&1; grep -E 'test result|panicked|batch of two|FAIL' $L/fp8-tests.log | cut -c1-250 | head -20
grep -E 'amax' $L/fp8-tests.log | grep -c PASS
for sc in tensor block; do
  timeout 200 compute-sanitizer --tool memcheck $R/host --dtype e4m3 --transa t --scaling $sc --m 264 --n 200 --k 384 --epilogue bias-col,silu,amax --variant auto --seed 1 > $L/sanitize-$sc.log 2>&1; grep -E 'ERROR SUMMARY|PASS|FAIL' $L/sanitize-$sc.log | cut -c1-120 | tail -2
done
for nk in "6144 4096" "4096 4096" "28672 4096" "4096 14336"; do
  set -- $nk
  for sc in tensor block; do
    for e in none bias,gelu,amax; do
      echo "== m=$1 n=4096 k=$2 scaling=$sc epilogue=$e"
      ep=""; [ $e != none ] && ep="--epilogue $e"
      log=$L/fp8-$1-$2-$sc-${e//,/+}.log
      $R/host --variant auto --compare cublas --dtype e4m3 --transa t --scaling $sc --m $1 --n 4096 --k $2 $ep --seed 1 > $log 2>&1
      grep -E '^\| [a-z]|rror' $log | grep -v '^| variant'
      grep -c 'PASS' $log
    done
  done
done 2>&1 | tee $L/fp8.log
echo "== FP8 without an epilogue, the build before (host-base) and this one (host)"
for shape in "4096 4096 4096 tensor auto,wgmma-fp8:2" "4096 4096 4096 block auto,wgmma-fp8-block:3" "7168 4096 16384 block auto,wgmma-fp8-block:3" "2112 128 7168 block auto"; do
  set -- $shape
  for h in host-base host; do
    echo "-- $h m=$1 n=$2 k=$3 scaling=$4"
    $R/$h --variant $5 --compare cublas --dtype e4m3 --transa t --scaling $4 --m $1 --n $2 --k $3 --seed 1 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done 2>&1 | tee $L/plain.log
tar czf $OUT/logs.tgz -C $OUT logs
