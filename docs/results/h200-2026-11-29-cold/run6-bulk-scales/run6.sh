#!/bin/bash
# The swapped block-scaled kernel with A's scales bulk-copied beside each stage and B's held in
# the lanes (host-bulk) against the assisting threads' staging (host-d4): checks past a run of
# 32 slices, sanitizers, then cold and warm timing beside cuBLASLt, two rounds.
set -u
cd "$(dirname "$0")/.."
for h in host-bulk host-d4; do xz -dc run/$h.xz > /tmp/$h && chmod +x /tmp/$h; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
V=wgmma-fp8-block-swap:116,wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:164,wgmma-fp8-block-swap:16,wgmma-fp8-block-swap:32,wgmma-fp8-block-swap:64,wgmma-fp8-block-swap:232,wgmma-fp8-block-swap:332
timeout 120 /tmp/host-bulk $B --variant $V --m 2112 --n 128 --k 8976 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-130 | tee $L/checked.log
timeout 120 /tmp/host-bulk $B --variant wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:32 --m 1000 --n 72 --k 4160 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-130 | tee -a $L/checked.log
for t in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $t /tmp/host-bulk $B --variant wgmma-fp8-block-swap:132 --m 1000 --n 64 --k 4160 --iters 1 --warmup 0 > $L/$t.log 2>&1
  echo "$t $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/$t.log | tail -1) $(grep -c pass $L/$t.log) pass"
done
V=wgmma-fp8-block-swap:116,wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:164,wgmma-fp8-block-swap:16,wgmma-fp8-block-swap:32,wgmma-fp8-block-swap:64
for r in 1 2; do
for mode in cold warm; do
for h in host-d4 host-bulk; do
for s in 2112x64x7168 4096x64x7168 2112x128x7168 4096x128x7168; do
  IFS=x read m n k <<< "$s"
  c=""; [ $mode = cold ] && c=--cold
  echo "== $r $mode $h $s"
  timeout 60 /tmp/$h $B $c --iters 50 --no-check --variant $V --compare cublas --m $m --n $n --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-110
done
done
done
done | tee $L/swap.log > /dev/null
tar czf $OUT/logs.tgz -C $OUT logs
