#!/bin/bash
# Tile order: groups of 4, 8 (HEAD), 16 unit-rows, and groups of 8 unit-columns (along n),
# four builds of one commit alternating per shape (branch wip/raster: host-g8 plain,
# host-g4 GEMM_RASTER_GROUP=4, host-g16 GEMM_RASTER_GROUP=16, host-n8 GEMM_RASTER_ALONG_N=1);
# bf16 fused bias+GELU at Llama-3 8B's layers with 4096 tokens against cuBLASLt's GELU_BIAS,
# and block-scaled e4m3 at M = 4096 of DeepGEMM's dense set against cuBLASLt.
set -u
cd "$(dirname "$0")/.."
for v in g8 g4 g16 n8; do xz -dc run/host-$v.xz > /tmp/host-$v && chmod +x /tmp/host-$v; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch' | grep -v '^| variant' | cut -c1-150; }
for r in 1 2; do
for s in "6144 4096" "4096 4096" "28672 4096" "4096 14336" "128256 4096"; do
  set -- $s
  for v in g8 g4 g16 n8; do
    echo "== r$r $v bf16 $1 x 4096 x $2"
    timeout 100 /tmp/host-$v --variant auto --compare cublas --dtype bf16 --transa t --m $1 --n 4096 --k $2 --epilogue bias,gelu --seed 1 --no-check 2>&1 | row
  done
done
for s in 4096x4096x7168 7168x4096x16384 2112x4096x7168 24576x4096x1536 7168x4096x2048; do
  set -- ${s//x/ }
  for v in g8 g4 g16 n8; do
    echo "== r$r $v e4m3 $1 x $2 x $3"
    timeout 60 /tmp/host-$v --variant auto --compare cublas --dtype e4m3 --transa t --scaling block --m $1 --n $2 --k $3 --seed 1 --no-check 2>&1 | row
  done
done
done | tee $L/raster.log
tar czf $OUT/logs.tgz -C $OUT logs
