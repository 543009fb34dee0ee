#!/bin/bash
# Run 1's changes plus each slice's descriptors advanced from stage 0's (`:9` 118 -> 112
# instructions per slice): sanitizer and checks over many slices (runs of 32 B scales crossed,
# an odd last slice), HEAD's build (host-before) against this one (host), alternating;
# `:8` against `:9` where `auto` chose `:8`; `auto` over DeepGEMM's dense set.
cd "$(dirname "$0")/.."
for f in host host-before; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
for t in 9 10; do
  timeout 150 compute-sanitizer --tool memcheck ./host --variant wgmma-fp8-block --tile $t $B --m 1000 --n 392 --k 8976 > $L/memcheck$t.log 2>&1
  echo "memcheck :$t $(grep -E 'ERROR SUMMARY' $L/memcheck$t.log | tail -1) $(grep -cE 'PASS' $L/memcheck$t.log) pass"
done
timeout 150 compute-sanitizer --tool memcheck ./host --variant wgmma-fp8-block-swap:132 $B --m 2112 --n 64 --k 8976 > $L/memcheck-swap.log 2>&1
echo "memcheck swap $(grep -E 'ERROR SUMMARY' $L/memcheck-swap.log | tail -1) $(grep -cE 'PASS' $L/memcheck-swap.log) pass"
timeout 150 compute-sanitizer --tool racecheck ./host --variant wgmma-fp8-block --tile 8 $B --m 1000 --n 392 --k 8976 > $L/racecheck8.log 2>&1
echo "racecheck :8 $(grep -E 'RACECHECK SUMMARY' $L/racecheck8.log | tail -1) $(grep -cE 'PASS' $L/racecheck8.log) pass"
for s in "$B --variant wgmma-fp8-block:6,wgmma-fp8-block:8,wgmma-fp8-block:9,wgmma-fp8-block:10 --m 1000 --n 520 --k 8976" \
         "$B --variant wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:32 --m 2112 --n 128 --k 8976" \
         "--dtype e4m3 --transa t --variant wgmma-fp8:5,auto --m 1000 --n 520 --k 1312"; do
  timeout 150 ./host $s --compare cublas 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-120
done | tee $L/checked.log
for round in 1 2; do
for h in host-before host; do
  for s in "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m 4096 --n 4096 --k 7168" \
           "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m 8192 --n 8192 --k 8192" \
           "$B --variant wgmma-fp8-block:9 --m 7168 --n 4096 --k 16384" \
           "$B --variant wgmma-fp8-block:9 --m 2112 --n 4096 --k 7168" \
           "$B --variant wgmma-fp8-block:10 --m 7168 --n 128 --k 16384" \
           "$B --variant auto --m 2112 --n 64 --k 7168" \
           "$B --variant auto --m 4096 --n 128 --k 7168" \
           "--dtype e4m3 --transa t --variant auto --size 8192"; do
    echo "== $round $h $s"
    timeout 60 ./$h $s --compare cublas --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done
done | tee $L/before-after.log
for s in 4096x4096x7168 4096x4096x4096 6144x6144x6144 8192x8192x1024 7168x4096x2048 \
         7168x128x2048 32768x128x512 7168x64x2048 32768x64x512 24576x128x1536; do
  set -- ${s//x/ }
  echo "== $1 x $2 x $3"
  timeout 60 ./host --variant wgmma-fp8-block:8,wgmma-fp8-block:9 --compare cublas $B --m $1 --n $2 --k $3 --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/eight-nine.log
for s in 2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048 \
         2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 \
         2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048; do
  set -- ${s//x/ }
  echo "== $1 x $2 x $3"
  timeout 60 ./host --variant auto --compare cublas $B --m $1 --n $2 --k $3 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/dense.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
