#!/bin/bash
# The build as committed (host-final2: the stream-k tiles' producer at 56 registers, :464 not
# built): checks, memcheck, racecheck, the FP8 and graph GPU tests, auto at the changed shapes;
# then wgmma-narrow's stream-k grid in equal parts (host-nq) against the hybrid (host-final2),
# builds in turn, cold, two rounds: bf16 N,N and block-scaled e4m3 decode shapes where auto
# takes the narrow kernels.
set -u
cd "$(dirname "$0")/.."
for h in host-final2 host-nq; do xz -dc run/$h.xz > /tmp/$h && chmod +x /tmp/$h; done
xz -dc run/tests-gpu.xz > /tmp/tests-gpu && chmod +x /tmp/tests-gpu
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror:|FAIL|panic' | grep -v '^| variant' | cut -c1-120; }
B="--dtype e4m3 --transa t --scaling block --seed 1"
S=wgmma-fp8-block-swap
for s in 2112x64x7168 1000x72x4160 4096x128x7168 264x40x1408 1024x64x7168; do
  IFS=x read m n k <<< "$s"
  echo "== $s"
  timeout 120 /tmp/host-final2 $B --iters 3 --variant auto,$S:432,$S:448 --epilogue bias,gelu,amax --beta 0.5 --m $m --n $n --k $k 2>&1 | row
done > $L/check.log
timeout 300 compute-sanitizer --tool memcheck /tmp/host-final2 $B --iters 1 --variant $S:448,$S:432 --m 2112 --n 64 --k 1024 2>&1 | tail -3 > $L/memcheck.log
timeout 300 compute-sanitizer --tool racecheck /tmp/host-final2 $B --iters 1 --variant $S:448,$S:432 --m 2112 --n 64 --k 1024 2>&1 | tail -3 > $L/racecheck.log
for t in the_fp8_kernels_match_the_reference_on_the_gpu plans_enqueue_into_a_cuda_graph_without_allocating_or_waiting; do
  timeout 300 /tmp/tests-gpu --exact $t --test-threads 1 2>&1 | grep -E "^test |test result|captured and replayed|panicked"
done > $L/tests.log 2>&1
for r in 1 2; do
  for s in 2112x64x7168 1024x64x7168 1536x64x7168 3072x64x7168 1024x128x7168 1536x128x7168; do
    IFS=x read m n k <<< "$s"
    echo "== e4m3 r$r host-final2 $s"
    timeout 60 /tmp/host-final2 $B --iters 50 --no-check --cold --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
done > $L/auto.log
for r in 1 2; do for h in host-final2 host-nq; do
  for s in 2112x1x7168 2112x16x7168 4096x16x4096 6144x64x4096 2112x64x1024 4096x128x14336 7168x16x16384; do
    IFS=x read m n k <<< "$s"
    echo "== bf16nn r$r $h $s"
    timeout 60 /tmp/$h --dtype bf16 --seed 1 --iters 50 --no-check --cold --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
  for s in 2112x1x7168 2112x16x7168 2112x48x7168 4096x16x7168 7168x16x16384 7168x32x2048; do
    IFS=x read m n k <<< "$s"
    echo "== e4m3 r$r $h $s"
    timeout 60 /tmp/$h $B --iters 50 --no-check --cold --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
done; done > $L/narrow.log
for s in 2112x16x7168 6144x64x4096; do
  IFS=x read m n k <<< "$s"
  timeout 60 /tmp/host-nq --dtype bf16 --seed 1 --iters 3 --variant auto --m $m --n $n --k $k 2>&1 | row
  timeout 60 /tmp/host-nq $B --iters 3 --variant auto --m $m --n $n --k $k 2>&1 | row
done > $L/narrow-check.log
tar czf $OUT/logs.tgz -C $OUT logs
