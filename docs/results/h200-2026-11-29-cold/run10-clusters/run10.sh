#!/bin/bash
# Clusters of two sharing the tokens (multicast), now that the scales no longer pace the ring:
# the swapped kernel's cluster tiles beside the one-block tiles auto takes, cold L2.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-rule.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
B="--dtype e4m3 --transa t --scaling block --seed 1 --iters 50 --cold"
S=wgmma-fp8-block-swap
timeout 60 /tmp/host $B --variant $S:216,$S:232,$S:316,$S:332 --m 2112 --n 128 --k 4160 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-110 | tee $L/checked.log
for r in 1 2; do
for s in 2112x64x7168 4096x64x7168 2112x128x7168 4096x128x7168 7168x64x2048; do
  IFS=x read m n k <<< "$s"
  echo "== $r $s"
  timeout 60 /tmp/host $B --no-check --variant auto,$S:216,$S:232,$S:316,$S:332 --compare cublas --m $m --n $n --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-110
done
done | tee $L/cluster.log
tar czf $OUT/logs.tgz -C $OUT logs
