#!/bin/bash
# The final build (host: `FROM_STAGE` a const parameter of `in_turns`, the Ahead kernels' PTX
# HEAD's again) against HEAD's (host-head): racecheck on the swapped kernel with its stages
# reused, both builds; the changed kernels alternating, three rounds.
cd "$(dirname "$0")/.."
for f in host host-head; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
for h in host-head host; do
  timeout 150 compute-sanitizer --tool racecheck ./$h --variant wgmma-fp8-block-swap:132 --m 2112 --n 64 --k 8976 $B --iters 1 --warmup 0 > $L/race-$h-swap-132.log 2>&1
  echo "$h swap-132: $(grep -E 'RACECHECK SUMMARY' $L/race-$h-swap-132.log | tail -1) $(grep -cE 'PASS' $L/race-$h-swap-132.log) pass"
done | tee $L/race.log
for round in 1 2 3; do
for h in host-head host; do
  for s in "$B --variant wgmma-fp8-block-swap:132 --m 2112 --n 64 --k 7168" \
           "$B --variant wgmma-fp8-block-swap:132 --m 4096 --n 64 --k 7168" \
           "$B --variant wgmma-fp8-block-swap:32 --m 4096 --n 128 --k 7168" \
           "$B --variant wgmma-fp8-block:8 --m 7168 --n 128 --k 2048" \
           "$B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m 4096 --n 4096 --k 7168"; do
    echo "== $round $h $s"
    timeout 60 ./$h $s --compare cublas --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done
done | tee $L/before-after.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
