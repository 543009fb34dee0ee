#!/bin/bash
# Tile order, second look: groups of 8 unit-rows (HEAD, m fastest) against groups of 8
# unit-columns (n fastest), two builds of one commit alternating per shape, three rounds, over
# the shapes both orders touch: bf16 fused bias+GELU (Llama-3 8B, 4096 tokens, T,N) against
# cuBLASLt's GELU_BIAS, bf16 N,N squares and short k, strided batches, block-scaled e4m3 at
# DeepGEMM's M = 4096, and e4m3 masked / dense at 1 024 tokens.
set -u
cd "$(dirname "$0")/.."
for v in g8 n8; do xz -dc run/host-$v.xz > /tmp/host-$v && chmod +x /tmp/host-$v; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch' | grep -v '^| variant' | cut -c1-150; }
both() { for v in g8 n8; do echo "== r$r $v $1"; shift_args=("${@:2}"); timeout 100 /tmp/host-$v "${shift_args[@]}" --seed 1 --no-check 2>&1 | row; done; }
for r in 1 2 3; do
  for s in "6144 4096" "4096 4096" "28672 4096" "4096 14336" "128256 4096"; do
    set -- $s
    both "gelu $1x4096x$2" --variant auto --compare cublas --dtype bf16 --transa t --m $1 --n 4096 --k $2 --epilogue bias,gelu
  done
  for s in 4096x4096x4096 8192x8192x8192 8192x8192x1024; do
    set -- ${s//x/ }
    both "bf16-nn $s" --variant auto --compare cublas --dtype bf16 --m $1 --n $2 --k $3
  done
  both "batch 1024x2048x2048x128" --variant auto --compare cublas --dtype bf16 --m 2048 --n 2048 --k 128 --batch 1024
  both "batch 1024x512x512x64" --variant auto --compare cublas --dtype bf16 --m 512 --n 512 --k 64 --batch 1024
  for s in 2112x4096x7168 24576x4096x1536 32768x4096x512 7168x4096x16384 4096x4096x7168 7168x4096x2048; do
    set -- ${s//x/ }
    both "e4m3 $s" --variant auto --compare cublas --dtype e4m3 --transa t --scaling block --m $1 --n $2 --k $3
  done
  for s in "4096 7168" "7168 2048"; do
    set -- $s
    both "masked $1x1024x$2" --variant auto --compare cublas --dtype e4m3 --transa t --scaling block --m $1 --k $2 --groups 1 --group-m 1024 --masked
    both "dense $1x1024x$2" --variant auto,wgmma-fp8-block:8,wgmma-fp8-block:9,wgmma-fp8-block:10 --compare cublas --dtype e4m3 --transa t --scaling block --m $1 --n 1024 --k $2
  done
done | tee $L/raster2.log
tar czf $OUT/logs.tgz -C $OUT logs
