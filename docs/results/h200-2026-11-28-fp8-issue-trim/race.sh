#!/bin/bash
cd "$(dirname "$0")/.."
for f in host host-before; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
B="--dtype e4m3 --transa t --scaling block --seed 1"
for h in host-before host; do for t in 8 9; do for k in 1008 8976; do
  timeout 200 compute-sanitizer --tool racecheck ./$h --variant wgmma-fp8-block --tile $t $B --m 1000 --n 392 --k $k > $L/race-$h-$t-$k.log 2>&1
  echo "$h :$t k=$k $(grep -E 'RACECHECK SUMMARY' $L/race-$h-$t-$k.log | tail -1) $(grep -cE 'PASS' $L/race-$h-$t-$k.log) pass"
done; done; done
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
