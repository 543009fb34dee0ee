#!/bin/bash
# HEAD's build (host-head), the race fix (host: `Consumer::finish_loads`, bar.warp.sync before
# lane 0's release in the TF32 and block-scaled kernels) and, where present, the fix with the
# warpgroup index broadcast in the skeleton's Consumer (host-b): racecheck before and
# after, and checks (run2.sh: timings).
cd "$(dirname "$0")/.."
for f in host host-head host-b; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
R="--iters 1 --warmup 0"
race() { # host label args...
  local h=$1 l=$2; shift 2
  timeout 120 compute-sanitizer --tool racecheck ./$h "$@" $R > $L/race-$h-$l.log 2>&1
  echo "$h $l: $(grep -E 'RACECHECK SUMMARY' $L/race-$h-$l.log | tail -1) $(grep -cE 'PASS' $L/race-$h-$l.log) pass"
}
for h in host-head host; do
  race $h tf32-1 --variant wgmma-tf32:1 --m 520 --n 264 --k 1008 --seed 1
  race $h tf32-2 --variant wgmma-tf32:2 --m 520 --n 264 --k 1008 --seed 1
  race $h 3xtf32-1 --variant wgmma-3xtf32:1 --m 520 --n 264 --k 1008 --seed 1
  race $h fp8b-9 --variant wgmma-fp8-block:9 $B --m 520 --n 264 --k 1008
  race $h fp8b-8 --variant wgmma-fp8-block:8 $B --m 520 --n 264 --k 1008
done 2>&1 | tee $L/race.log
for h in host host-b; do
  [ -f $h ] || continue
  race $h fp8b-10 --variant wgmma-fp8-block:10 $B --m 520 --n 264 --k 1008
  race $h swap-132 --variant wgmma-fp8-block-swap:132 $B --m 2112 --n 64 --k 1008
  race $h tf32-5 --variant wgmma-tf32:5 --m 520 --n 264 --k 1008 --seed 1
  race $h bf16-auto --variant auto --dtype bf16 --m 520 --n 264 --k 1008 --seed 1
  race $h bf16-stream-k --variant wgmma-stream-k --dtype bf16 --m 520 --n 264 --k 1008 --seed 1
done 2>&1 | tee -a $L/race.log
for h in host host-b; do
  [ -f $h ] || continue
  for s in "$B --variant wgmma-fp8-block:6,wgmma-fp8-block:8,wgmma-fp8-block:9,wgmma-fp8-block:10,wgmma-fp8-block:3 --m 1000 --n 520 --k 8976" \
           "$B --variant wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:32 --m 2112 --n 128 --k 8976" \
           "--variant wgmma-tf32:1,wgmma-tf32:2,wgmma-tf32:5,wgmma-3xtf32:1,wgmma-3xtf32:2 --m 1000 --n 520 --k 1312" \
           "--dtype bf16 --variant auto,wgmma-stream-k,wgmma-split-k,wgmma-queue:3 --m 1000 --n 520 --k 1312"; do
    timeout 150 ./$h $s --compare cublas 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-120
  done
done | tee $L/checked.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
