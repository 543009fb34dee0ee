#!/bin/bash
# The final build (the warp-uniform warpgroup and the in-block release local to the FP8 block
# kernels, where run 2 had them in the skeleton: there they made ptxas serialize the 16-bit
# stream-k and split-k kernels' wgmmas): grouped GPU test, sanitizer, checks over 71 slices,
# HEAD's build (host-before) against it (host) alternating, and `auto` over DeepGEMM's dense
# set with its new choice between :8 and :9.
cd "$(dirname "$0")/.."
for f in host host-before tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
./tests-gpu grouped_fp8 > $L/grouped-test.log 2>&1; grep -E 'test result' $L/grouped-test.log
for t in 8 9 10; do
  timeout 150 compute-sanitizer --tool memcheck ./host --variant wgmma-fp8-block --tile $t $B --m 1000 --n 392 --k 8976 > $L/memcheck$t.log 2>&1
  echo "memcheck :$t $(grep -E 'ERROR SUMMARY' $L/memcheck$t.log | tail -1) $(grep -cE 'PASS' $L/memcheck$t.log) pass"
done
timeout 150 compute-sanitizer --tool memcheck ./host --variant wgmma-fp8-block-swap:132 $B --m 2112 --n 64 --k 8976 > $L/memcheck-swap.log 2>&1
echo "memcheck swap $(grep -E 'ERROR SUMMARY' $L/memcheck-swap.log | tail -1) $(grep -cE 'PASS' $L/memcheck-swap.log) pass"
for s in "$B --variant wgmma-fp8-block:6,wgmma-fp8-block:8,wgmma-fp8-block:9,wgmma-fp8-block:10,wgmma-fp8-block:3,wgmma-fp8-block:4 --m 1000 --n 520 --k 8976" \
         "$B --variant wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:32 --m 2112 --n 128 --k 8976" \
         "--dtype e4m3 --transa t --variant wgmma-fp8:5,auto --m 1000 --n 520 --k 1312" \
         "--dtype bf16 --variant auto,wgmma-stream-k,wgmma-split-k --m 1000 --n 520 --k 1312"; do
  timeout 150 ./host $s --compare cublas 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-120
done | tee $L/checked.log
for round in 1 2; do
for h in host-before host; do
  for s in "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m 4096 --n 4096 --k 7168" \
           "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m 8192 --n 8192 --k 8192" \
           "$B --variant wgmma-fp8-block:9 --m 7168 --n 4096 --k 16384" \
           "$B --variant wgmma-fp8-block:10 --m 7168 --n 128 --k 16384" \
           "$B --variant wgmma-fp8-block-swap:132 --m 2112 --n 64 --k 7168" \
           "--dtype bf16 --variant auto --size 8192" \
           "--dtype bf16 --variant wgmma-stream-k --m 4096 --n 4096 --k 4096"; do
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
