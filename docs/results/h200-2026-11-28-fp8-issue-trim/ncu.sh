#!/bin/bash
# Where :9's warps wait, before (HEAD's build) and after the trim: ncu's scheduler and warp-state
# sections on one launch at 4096 x 4096 x 7168.
cd "$(dirname "$0")/.."
for f in host host-before; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
B="--dtype e4m3 --transa t --scaling block --seed 1"
for h in host-before host; do
  timeout 250 ncu --kernel-name regex:fp8_block --launch-skip 3 --launch-count 1 --section SchedulerStats --section WarpStateStats --section SpeedOfLight \
    ./$h --variant wgmma-fp8-block:9 $B --m 4096 --n 4096 --k 7168 --no-check > $L/ncu-$h.log 2>&1
  echo "== $h"; grep -E "Issued Warp|No Eligible|Eligible Warps|Active Warps|Stall|Warp Cycles|Compute \(SM\)|Duration|Issue Slot" $L/ncu-$h.log | head -30
done
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
