#!/bin/bash
# wgmma-queue:2 (whose walk the vote changed too, and which ptxas now spills a few words more of
# per tile: 12/8 bytes in NN and TN, 20/16 in NT and TT), HEAD's build (host-head) against the
# final one (host), alternating, two rounds; bf16, one GEMM and an attention-like batch.
cd "$(dirname "$0")/.."
for f in host host-head; do xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
for round in 1 2; do
for h in host-head host; do
  for s in "--size 4096" "--size 4096 --transa t --transb t" "--batch 1024 --m 512 --n 512 --k 64" "--batch 1024 --m 512 --n 512 --k 64 --transb t"; do
    echo "== $round $h $s"
    timeout 60 ./$h --dtype bf16 --variant wgmma-queue:2 $s --compare cublas --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done
done | tee $L/queue.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
