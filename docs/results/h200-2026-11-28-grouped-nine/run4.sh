#!/bin/bash
# compute-sanitizer on the final build: memcheck and racecheck on `:9` and `:8` walking groups,
# both layouts (m = 520: a partial tile of 192 rows; k = 1008: a partial slice).
cd "$(dirname "$0")/.."
xz -d -T8 -c run/host.xz > host && chmod +x host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1 --m 520 --k 1008 --iters 1 --warmup 0"
for tool in memcheck racecheck; do
  for v in 9 8; do
    for g in "--groups 3 --group-m 256" "--groups 3 --group-m 256 --masked"; do
      l=$tool-$v-$(echo $g | tr -d ' -'); 
      timeout 120 compute-sanitizer --tool $tool ./host --variant wgmma-fp8-block:$v $B $g > $L/$l.log 2>&1
      echo "$tool :$v $g: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/$l.log | tail -1) | $(grep -c 'PASS' $L/$l.log) pass"
    done
  done
done | tee $L/sanitize.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
