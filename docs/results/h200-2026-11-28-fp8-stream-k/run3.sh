#!/bin/bash
# The descriptor's k-step added as a 32-bit word: the build before (host-before, :10 and :11 of
# run 2) and after (host), alternating, each beside cuBLAS(Lt) in its own process; then `auto`
# (with :10 for long-k decode) over DeepGEMM's dense set, and the sanitizer on :9.
cd "$(dirname "$0")/.."
for f in host host-before; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
for round in 1 2; do
for h in host-before host; do
  for s in "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m 4096 --n 4096 --k 7168" \
           "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m 8192 --n 8192 --k 8192" \
           "$B --variant wgmma-fp8-block:9 --m 7168 --n 4096 --k 2048" \
           "$B --variant wgmma-fp8-block:9 --m 2112 --n 4096 --k 7168" \
           "--dtype e4m3 --transa t --variant auto --size 8192" \
           "--dtype bf16 --variant auto --size 8192" \
           "--dtype bf16 --transa t --variant auto --m 4096 --n 4096 --k 14336" \
           "--dtype bf16 --variant auto --m 2112 --n 4096 --k 7168" \
           "--dtype f32 --math tf32 --variant auto --size 8192"; do
    echo "== $round $h $s"
    timeout 60 ./$h $s --compare cublas --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done
done | tee $L/before-after.log
timeout 150 compute-sanitizer --tool memcheck ./host --variant wgmma-fp8-block --tile 9 $B --m 1000 --n 392 --k 1008 > $L/sanitize9.log 2>&1
grep -E "ERROR SUMMARY" $L/sanitize9.log | tail -1
for s in 2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048 \
         2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 \
         2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048; do
  set -- ${s//x/ }
  echo "== $1 x $2 x $3"
  timeout 60 ./host --variant auto,wgmma-fp8-block:9,wgmma-fp8-block:10 --compare cublas $B --m $1 --n $2 --k $3 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/dense.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
