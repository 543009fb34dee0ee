#!/usr/bin/env bash
# A/B of the FP8 kernels without an epilogue: the build before (host-base) and this one (host), alternating, three rounds.
set -uo pipefail
R=.gpu/run
mkdir -p $OUT/logs; L=$OUT/logs
for f in host host-base; do [ -x $R/$f ] || { xz -d -c $R/$f.xz > $R/$f && chmod +x $R/$f; }; done
for shape in "4096 4096 4096 block wgmma-fp8-block:6" "6144 4096 4096 block wgmma-fp8-block:7" "4096 4096 4096 tensor wgmma-fp8:2" "28672 4096 4096 tensor wgmma-fp8:2" "4096 4096 4096 block wgmma-fp8-block:3"; do
  set -- $shape
  for round in 1 2 3; do
    for h in host-base host; do
      printf "%s %s r%s " "$h" "$1x$2x$3-$4-$5" $round
      $R/$h --variant $5 --dtype e4m3 --transa t --scaling $4 --m $1 --n $2 --k $3 --seed 1 --no-check --iters 50 2>&1 | grep -oE 'median [0-9.]+ ms, min [0-9.]+ ms|rror.*'
    done
  done
done 2>&1 | tee $L/ab.log
