#!/bin/bash
# wgmma-fp8-swap (e4m3, one scale per tensor): the GPU tests that run it, every tile checked,
# sanitizers, then auto HEAD (wgmma-fp8-narrow) against new at decode shapes, cold, two rounds
# in opposite orders, and warm once.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-swap7.xz > /tmp/host && chmod +x /tmp/host
xz -dc run/host-final.xz > /tmp/host-head && chmod +x /tmp/host-head
xz -dc run/tests-gpu.xz > /tmp/tests-gpu && chmod +x /tmp/tests-gpu
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror:|FAIL|panic' | grep -v '^| variant' | cut -c1-130; }
timeout 400 /tmp/tests-gpu --test-threads 1 --nocapture the_fp8_kernels_match plans_enqueue_into_a_cuda_graph the_library_runs_fp8 > $L/tests.log 2>&1
grep -E "test result|panicked" $L/tests.log | cut -c1-300
T=wgmma-fp8-swap:132,wgmma-fp8-swap:116,wgmma-fp8-swap:148,wgmma-fp8-swap:156,wgmma-fp8-swap:164,wgmma-fp8-swap:32,wgmma-fp8-swap:48,wgmma-fp8-swap:64,wgmma-fp8-swap:232,wgmma-fp8-swap:248,wgmma-fp8-swap:264,wgmma-fp8-swap:332,wgmma-fp8-swap:348,wgmma-fp8-swap:356,wgmma-fp8-swap:364
for s in 1000x72x4160 2112x40x4096 2112x1x4096; do
  IFS=x read m n k <<< "$s"
  echo "== check e4m3 $s"
  timeout 120 /tmp/host --dtype e4m3 --transa t --seed 2 --iters 3 --variant $T --m $m --n $n --k $k 2>&1 | row
  echo "== check e4m3 bias,gelu,amax beta $s"
  timeout 120 /tmp/host --dtype e4m3 --transa t --seed 2 --iters 3 --variant $T --m $m --n $n --k $k --ldc $((m+8)) --beta 0.5 --epilogue bias,gelu,amax 2>&1 | row
done > $L/checks.log
echo "checks: $(grep -c '| pass' $L/checks.log) pass, $(grep '^| ' $L/checks.log | grep -vc '| pass') not"
for tool in memcheck racecheck; do
  for t in 132 248 332; do
    echo "== $tool :$t"
    timeout 120 compute-sanitizer --tool $tool /tmp/host --dtype e4m3 --transa t --seed 2 --iters 1 --warmup 0 --variant wgmma-fp8-swap:$t --m 520 --n 72 --k 1040 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY"
  done
done > $L/sanitize.log 2>&1
grep -E "==|SUMMARY" $L/sanitize.log | paste - - | cut -c1-120
S="2112x1x7168 4096x1x4096 2112x16x7168 4096x16x4096 6144x16x4096 28672x16x4096 2112x64x7168 4096x64x4096 6144x64x4096 7168x64x2048 2112x128x7168 4096x128x4096 6144x128x4096"
for r in 1 2; do
  for s in $S; do
    IFS=x read m n k <<< "$s"
    for b in head new; do
      h=/tmp/host; [ $b = head ] && h=/tmp/host-head
      [ $r = 2 ] && { [ $b = head ] && h=/tmp/host || h=/tmp/host-head; b=$([ $b = head ] && echo new || echo head); }
      echo "== r$r cold $b $s"
      timeout 60 $h --dtype e4m3 --transa t --seed 1 --iters 50 --no-check --cold --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
    done
  done
done > $L/auto.log
for s in $S; do
  IFS=x read m n k <<< "$s"
  for b in head new; do
    h=/tmp/host; [ $b = head ] && h=/tmp/host-head
    echo "== r1 warm $b $s"
    timeout 60 $h --dtype e4m3 --transa t --seed 1 --iters 50 --no-check --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
done >> $L/auto.log
tar czf $OUT/logs.tgz -C $OUT logs
