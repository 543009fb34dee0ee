#!/bin/bash
# The kernels' clock (--clock kernels, CUPTI's stamps) beside the events (--clock events), both
# cold, on DeepGEMM's dense set with `auto --scaling block` and cuBLASLt in the same process;
# ncu's gpu__time_duration on two shapes as a check of the CUPTI figures.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-clock.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
CUPTI=$(find / -name 'libcupti.so*' 2>/dev/null | head -5); echo "$CUPTI" > $L/cupti.txt
export LD_LIBRARY_PATH=$(dirname $(echo "$CUPTI" | head -1)):${LD_LIBRARY_PATH:-}
row() { grep -E '^\| [a-z]|rror|FAIL|panic|CUPTI|clock' | grep -v '^| variant' | cut -c1-130; }
F="2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048 2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048"
# a first call, checked, with the full report line
timeout 120 /tmp/host --dtype e4m3 --transa t --scaling block --seed 1 --iters 20 --cold --clock kernels --variant auto --compare cublas --m 2112 --n 64 --k 7168 > $L/first.log 2>&1
for r in 1 2; do for c in events kernels; do
  for s in $F; do
    IFS=x read m n k <<< "$s"
    echo "== r$r $c $s"
    timeout 90 /tmp/host --dtype e4m3 --transa t --scaling block --seed 1 --iters 50 --no-check --cold --clock $c --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
done; done > $L/dense.log
# ncu's kernel durations (its own flush before each kernel, clocks not locked)
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for s in 2112x64x7168 7168x64x2048 4096x4096x7168; do
  IFS=x read m n k <<< "$s"
  echo "== ncu $s"
  timeout 200 $NCU --metrics gpu__time_duration.sum --cache-control all --clock-control none --csv \
    /tmp/host --dtype e4m3 --transa t --scaling block --seed 1 --iters 5 --warmup 1 --no-check --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | grep -E 'gpu__time_duration|==ERR|rror' | awk -F'","' '{print $5" | "$(NF)}' | cut -c1-140
  echo "-- the same with --clock kernels, warm, no ncu"
  timeout 90 /tmp/host --dtype e4m3 --transa t --scaling block --seed 1 --iters 50 --no-check --clock kernels --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
done > $L/ncu.log 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
