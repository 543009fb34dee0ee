#!/bin/bash
# The swapped kernel only: HEAD (host-head), run 2's build (host-a: the sync, the next slice's
# scales taken before the wait as in HEAD) and run 4's (host: the scales taken after the
# release), alternating, four rounds.
cd "$(dirname "$0")/.."
for f in host host-a host-head; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
for round in 1 2 3 4; do
for h in host-head host-a host; do
  for s in "$B --variant wgmma-fp8-block-swap:132 --m 2112 --n 64 --k 7168" \
           "$B --variant wgmma-fp8-block-swap:132 --m 4096 --n 64 --k 7168" \
           "$B --variant wgmma-fp8-block-swap:32 --m 4096 --n 128 --k 7168"; do
    echo "== $round $h $s"
    timeout 60 ./$h $s --compare cublas --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done
done | tee $L/before-after.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
