#!/bin/bash
# The final build (host: `__syncwarp()` only where the scales come from the stage, the next
# slice's scales taken after the release), run 2's build (host-a: `__syncwarp()` before every
# block-kernel release) and HEAD's (host-head), alternating, two rounds; racecheck on the
# swapped kernel with its stages reused; DeepGEMM's dense set with `auto`.
cd "$(dirname "$0")/.."
for f in host host-a host-head; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
for s in "swap-132 --variant wgmma-fp8-block-swap:132 --m 2112 --n 64 --k 8976" \
         "swap-32 --variant wgmma-fp8-block-swap:32 --m 1024 --n 128 --k 8976" \
         "fp8b-9 --variant wgmma-fp8-block:9 --m 520 --n 264 --k 1008"; do
  set -- $s; l=$1; shift
  timeout 150 compute-sanitizer --tool racecheck ./host "$@" $B --iters 1 --warmup 0 > $L/race-$l.log 2>&1
  echo "host $l: $(grep -E 'RACECHECK SUMMARY' $L/race-$l.log | tail -1) $(grep -cE 'PASS' $L/race-$l.log) pass"
done | tee $L/race.log
for round in 1 2; do
for h in host-head host-a host; do
  for s in "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m 4096 --n 4096 --k 7168" \
           "$B --variant wgmma-fp8-block:8 --m 7168 --n 128 --k 2048" \
           "$B --variant wgmma-fp8-block:10 --m 7168 --n 128 --k 16384" \
           "$B --variant wgmma-fp8-block-swap:132 --m 2112 --n 64 --k 7168" \
           "$B --variant wgmma-fp8-block-swap:32 --m 4096 --n 128 --k 7168" \
           "$B --variant wgmma-fp8-block:6,wgmma-fp8-block:3 --m 4096 --n 4096 --k 4096"; do
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
