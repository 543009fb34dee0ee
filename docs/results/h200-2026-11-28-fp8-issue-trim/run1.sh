#!/bin/bash
# The consumers' issue trimmed (warpgroup index broadcast so descriptors stay uniform, rank 0
# without a cluster, B's scales held in lanes): checks on every kernel family the skeleton
# change touches, the sanitizer on :9, the build before (host-before) and after (host)
# alternating, each beside cuBLAS(Lt) in its own process; then `auto` over DeepGEMM's dense set.
cd "$(dirname "$0")/.."
for f in host host-before; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
for s in "$B --variant wgmma-fp8-block:8,wgmma-fp8-block:9,wgmma-fp8-block:10,wgmma-fp8-block:6 --m 1000 --n 520 --k 9000" \
         "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:10,auto --m 7168 --n 128 --k 16384" \
         "$B --variant auto --m 2112 --n 64 --k 7168" \
         "--dtype e4m3 --transa t --variant auto --m 1000 --n 520 --k 1312" \
         "--dtype bf16 --variant auto --m 1000 --n 520 --k 1312" \
         "--dtype bf16 --variant wgmma-pingpong,wgmma-stream-k,wgmma-cluster --m 1000 --n 520 --k 1312" \
         "--dtype f32 --math tf32 --variant auto --m 1000 --n 520 --k 1312" \
         "--dtype f32 --math fp32-accurate --variant auto --m 1000 --n 520 --k 1312"; do
  timeout 100 ./host $s --compare cublas 2>&1 | grep -E 'PASS|FAIL|rror' | cut -c1-110
done | tee $L/checked.log
timeout 150 compute-sanitizer --tool memcheck ./host --variant wgmma-fp8-block --tile 9 $B --m 1000 --n 392 --k 9000 > $L/sanitize9.log 2>&1
grep -E "ERROR SUMMARY" $L/sanitize9.log | tail -1
timeout 150 compute-sanitizer --tool racecheck ./host --variant wgmma-fp8-block --tile 8 $B --m 1000 --n 392 --k 9000 > $L/racecheck8.log 2>&1
grep -E "RACECHECK SUMMARY" $L/racecheck8.log | tail -1
for round in 1 2; do
for h in host-before host; do
  for s in "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m 4096 --n 4096 --k 7168" \
           "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m 8192 --n 8192 --k 8192" \
           "$B --variant wgmma-fp8-block:9 --m 7168 --n 4096 --k 16384" \
           "$B --variant wgmma-fp8-block:9 --m 2112 --n 4096 --k 7168" \
           "$B --variant wgmma-fp8-block:10 --m 7168 --n 128 --k 16384" \
           "$B --variant auto --m 2112 --n 64 --k 7168" \
           "--dtype e4m3 --transa t --variant auto --size 8192" \
           "--dtype bf16 --variant auto --size 8192" \
           "--dtype bf16 --transa t --variant auto --m 4096 --n 4096 --k 14336" \
           "--dtype f32 --math tf32 --variant auto --size 8192"; do
    echo "== $round $h $s"
    timeout 60 ./$h $s --compare cublas --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done
done | tee $L/before-after.log
for s in 2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048 \
         2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 \
         2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048; do
  set -- ${s//x/ }
  echo "== $1 x $2 x $3"
  timeout 60 ./host --variant auto --compare cublas $B --m $1 --n $2 --k $3 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/dense.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
