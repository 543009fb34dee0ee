#!/bin/bash
# Fused bias + GELU at Llama-3 8B's layers, 4096 tokens (TN): every 16-bit kernel that may run
# them against cuBLASLt's GELU_BIAS, two rounds in opposite orders.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch' | grep -v '^| variant' | cut -c1-150; }
V1=auto,wgmma-layouts:2,wgmma-layouts:3,wgmma-queue:3,wgmma-queue:2,wgmma-queue:1,wgmma-stream-k
V2=wgmma-stream-k,wgmma-queue:1,wgmma-queue:2,wgmma-queue:3,wgmma-layouts:3,wgmma-layouts:2,auto
for r in 1 2; do
  V=$V1; [ $r = 2 ] && V=$V2
  for s in "6144 4096" "4096 4096" "28672 4096" "4096 14336" "128256 4096"; do
    set -- $s
    echo "== round $r $1 x 4096 x $2"
    timeout 200 /tmp/host --variant $V --compare cublas --dtype bf16 --transa t --m $1 --n 4096 --k $2 --epilogue bias,gelu --seed 1 $([ $r = 2 ] && echo --no-check) 2>&1 | row
  done
done | tee $L/sweep.log
tar czf $OUT/logs.tgz -C $OUT logs
