#!/bin/bash
# Fused bias + GELU at Llama-3 8B's layers, 4096 tokens (TN): auto fused and unfused against
# cuBLASLt's GELU_BIAS, after the epilogue's fix; two builds alternating (host.xz, host-new.xz).
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-new.xz > /tmp/host && xz -dc run/host.xz > /tmp/host-old && chmod +x /tmp/host /tmp/host-old
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch' | grep -v '^| variant' | cut -c1-150; }
for h in host host-old; do
  for s in "6144 4096" "4096 4096" "28672 4096" "4096 14336" "128256 4096"; do
    set -- $s
    echo "== $h $1 x 4096 x $2"
    timeout 120 /tmp/$h --variant auto,unfused --compare cublas --dtype bf16 --transa t --m $1 --n 4096 --k $2 --epilogue bias,gelu --seed 1 2>&1 | row
  done
done | tee $L/epilogue.log
tar czf $OUT/logs.tgz -C $OUT logs
