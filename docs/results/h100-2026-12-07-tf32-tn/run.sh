#!/bin/bash
# Session 2 of 2026-12-07 evening: wgmma-tf32-swap (TF32, T,N) checked at every tile, under the
# sanitizer, the TF32 suite 2 in T,N with auto taking it, the squares beside cuBLAS TF32.
mkdir -p .gpu && for f in host tests-gpu; do gunzip -c .gpuc/$f.gz > .gpu/$f; chmod +x .gpu/$f; done
export OUT; nvidia-smi --query-gpu=name --format=csv,noheader
T0=$(date +%s)
step() { echo "$1 rc $2 at $(( $(date +%s) - T0 )) s"; }
ALL=$(for t in 132 116 148 156 164 32 48 64 248 264 332 348 356 364 1128 1256; do printf "wgmma-tf32-swap:$t,"; done)
timeout 90 .gpu/host --variant ${ALL%,},auto --math tf32 --dtype f32 --transa t --m 1000 --n 150 --k 1000 --lda 1004 --ldc 1001 --beta 0.5 --seed 3 > $OUT/tf32-swap-check.log 2>&1
step check $?; grep -E "^\| [a-z]|FAIL|rror" $OUT/tf32-swap-check.log | grep -v "^| variant"
timeout 40 .gpu/host --variant wgmma-tf32-swap:1256,wgmma-tf32-swap:1128 --math tf32 --dtype f32 --transa t --m 1000 --n 500 --k 1000 --ldc 1000 --seed 4 > $OUT/tf32-swap-check2.log 2>&1
step check2 $?; grep -E "^\| [a-z]|FAIL|rror" $OUT/tf32-swap-check2.log | grep -v "^| variant"
timeout 60 compute-sanitizer --tool memcheck .gpu/host --variant wgmma-tf32-swap:132,wgmma-tf32-swap:1256,wgmma-tf32-swap:248,wgmma-tf32-swap:332 --dtype f32 --transa t --m 520 --n 150 --k 1000 --ldc 521 --beta 0.5 --seed 1 --iters 1 --warmup 0 > $OUT/tf32-swap-sanitize.log 2>&1
step sanitize $?; grep -E "ERROR SUMMARY|^\| [a-z]" $OUT/tf32-swap-sanitize.log | grep -v "^| variant"
timeout 240 .gpu/host experiment shapes --dtype tf32 --suite 2 --layout tn --no-check --out $OUT/tf32-suite2-tn > $OUT/tf32-suite2-tn.log 2>&1
step tf32-suite $?; grep -E '^\| 2 |geomean|min ×|below' $OUT/tf32-suite2-tn.log | cut -d'|' -f3-12 | tail -52
for size in 4096 8192; do
  timeout 60 .gpu/host --variant auto,wgmma-tf32-swap:1128,wgmma-tf32-swap:1256 --math tf32 --dtype f32 --transa t --size $size --compare cublas-tf32 --no-check --seed 1 2>&1 | grep -E "^\| [a-z]|rror" | grep -v "^| variant"
  timeout 60 .gpu/host --variant auto --math tf32 --dtype f32 --size $size --compare cublas-tf32 --no-check --seed 1 2>&1 | grep -E "^\| [a-z]|rror" | grep -v "^| variant"
done > $OUT/tf32-squares.log 2>&1
step squares $?; cat $OUT/tf32-squares.log
echo "done at $(( $(date +%s) - T0 )) s"
