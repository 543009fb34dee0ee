#!/bin/bash
# wgmma-swap, the final build: every tile checked at edges (bf16, f16), the GPU tests that run
# it (CUDA graph, fused epilogues), compute-sanitizer, then auto HEAD against new at the decode
# shapes, cold and warm, two rounds in opposite orders.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-swap5.xz > /tmp/host && chmod +x /tmp/host
xz -dc run/host-final.xz > /tmp/host-head && chmod +x /tmp/host-head
xz -dc run/tests-gpu.xz > /tmp/tests-gpu && chmod +x /tmp/tests-gpu
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
T=wgmma-swap:132,wgmma-swap:116,wgmma-swap:148,wgmma-swap:156,wgmma-swap:164,wgmma-swap:32,wgmma-swap:48,wgmma-swap:64,wgmma-swap:232,wgmma-swap:248,wgmma-swap:264,wgmma-swap:332,wgmma-swap:348,wgmma-swap:356,wgmma-swap:364
row() { grep -E '^\| [a-z]|rror:|FAIL|panic' | grep -v '^| variant' | cut -c1-130; }
for s in 1000x72x4160 2112x40x1000 2112x1x4096; do
  IFS=x read m n k <<< "$s"
  for d in bf16 f16; do
    echo "== check $d $s"
    timeout 120 /tmp/host --dtype $d --transa t --seed 2 --iters 3 --variant $T --m $m --n $n --k $k 2>&1 | row
  done
  echo "== check bias,gelu beta $s"
  timeout 120 /tmp/host --dtype bf16 --transa t --seed 2 --iters 3 --variant $T --m $m --n $n --k $k --ldc $((m+8)) --beta 0.5 --epilogue bias,gelu,amax 2>&1 | row
done > $L/checks.log
echo "checks: $(grep -c '| pass' $L/checks.log) pass, $(grep '^| ' $L/checks.log | grep -vc '| pass') not"
timeout 300 /tmp/tests-gpu --test-threads 1 plans_enqueue_into_a_cuda_graph fused_epilogues_match cold_timing > $L/tests.log 2>&1
grep -E "test result|captured and replayed|panicked" $L/tests.log | cut -c1-400
for tool in memcheck racecheck; do
  for t in 132 248 332 48; do
    echo "== $tool :$t"
    timeout 120 compute-sanitizer --tool $tool /tmp/host --dtype bf16 --transa t --seed 2 --iters 1 --warmup 0 --variant wgmma-swap:$t --m 520 --n 72 --k 1040 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|pass|FAIL" | cut -c1-120
  done
done > $L/sanitize.log 2>&1
grep -E "==|SUMMARY" $L/sanitize.log | paste - - | cut -c1-120
S="2112x1x7168 4096x1x4096 2112x16x7168 4096x16x4096 6144x16x4096 7168x16x2048 28672x16x4096 2112x64x1024 2112x64x7168 1024x64x4096 4096x64x4096 6144x64x4096 7168x64x2048 4096x64x14336 2112x128x7168 4096x128x4096 6144x128x4096 4096x128x14336 28672x128x4096"
for r in 1 2; do
  for mode in cold warm; do
    c=""; [ $mode = cold ] && c=--cold
    for s in $S; do
      IFS=x read m n k <<< "$s"
      for b in head new; do
        h=/tmp/host; [ $b = head ] && h=/tmp/host-head
        [ $r = 2 ] && { [ $b = head ] && h=/tmp/host || h=/tmp/host-head; b=$([ $b = head ] && echo new || echo head); }
        echo "== r$r $mode $b $s"
        timeout 60 $h --dtype bf16 --transa t --seed 1 --iters 50 --no-check $c --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
      done
    done
  done
done > $L/auto.log
echo "== 2112x64x1024 tiles" >> $L/auto.log
timeout 60 /tmp/host --dtype bf16 --transa t --seed 1 --iters 50 --no-check --cold --variant wgmma-swap:116,wgmma-swap:132,wgmma-swap:232,wgmma-swap:248 --compare cublas --m 2112 --n 64 --k 1024 2>&1 | row >> $L/auto.log
tar czf $OUT/logs.tgz -C $OUT logs
