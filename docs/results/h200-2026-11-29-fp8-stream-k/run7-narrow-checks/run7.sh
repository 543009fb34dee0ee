#!/bin/bash
# The build as committed (host-final4: wgmma-narrow's stream-k grid in equal parts where they
# leave at most a tenth of the blocks idle, the hybrid otherwise): the GPU tests that run the
# narrow kernels, their checks at edge shapes, memcheck; auto at the narrow decode shapes, cold,
# beside host-final2 (the hybrid everywhere for the narrow kernel), two rounds.
set -u
cd "$(dirname "$0")/.."
for h in host-final2 host-final4; do xz -dc run/$h.xz > /tmp/$h && chmod +x /tmp/$h; done
xz -dc run/tests-gpu.xz > /tmp/tests-gpu && chmod +x /tmp/tests-gpu
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror:|FAIL|panic' | grep -v '^| variant' | cut -c1-120; }
for t in every_variant_matches_the_reference_on_the_gpu the_fp8_kernels_match_the_reference_on_the_gpu plans_enqueue_into_a_cuda_graph_without_allocating_or_waiting fused_epilogues_match_the_f64_reference strided_batches_match_the_f64_reference grouped_gemms_match_the_f64_reference; do
  timeout 240 /tmp/tests-gpu --exact $t --test-threads 1 2>&1 | grep -E "^test |test result|captured and replayed|panicked"
done > $L/tests.txt 2>&1
N=wgmma-narrow; F=wgmma-fp8-block-narrow
for s in 2112x40x1000 1000x72x4160 264x8x1408 4096x128x2048; do
  IFS=x read m n k <<< "$s"
  echo "== $s"
  timeout 120 /tmp/host-final4 --dtype bf16 --iters 2 --variant $N:8,$N:16,$N:32,$N:64,$N:128 --m $m --n $n --k $k --lda $((m+8)) --ldb $((k+8)) 2>&1 | row
  timeout 120 /tmp/host-final4 --dtype f16 --transa t --iters 2 --variant $N:8,$N:16,$N:32,$N:64,$N:128 --m $m --n $n --k $k --lda $((k+8)) --ldb $((k+8)) 2>&1 | row
done > $L/check.txt
for s in 2112x40x1024 1000x72x4160; do
  IFS=x read m n k <<< "$s"
  timeout 120 /tmp/host-final4 --dtype e4m3 --transa t --scaling block --iters 2 --variant $F:8,$F:16,$F:32,$F:64,$F:128 --m $m --n $n --k $k 2>&1 | row
done >> $L/check.txt
timeout 300 compute-sanitizer --tool memcheck /tmp/host-final4 --dtype bf16 --iters 1 --variant $N:16,$N:64 --m 2112 --n 40 --k 1024 2>&1 | tail -3 > $L/memcheck.txt
for r in 1; do for h in host-final2 host-final4; do
  for s in 2112x1x7168 2112x16x7168 4096x16x4096 6144x64x4096 2112x64x1024 4096x128x14336 7168x16x16384; do
    IFS=x read m n k <<< "$s"
    echo "== bf16nn r$r $h $s"
    timeout 60 /tmp/$h --dtype bf16 --seed 1 --iters 50 --no-check --cold --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
  for s in 2112x16x7168 2112x48x7168 4096x16x7168; do
    IFS=x read m n k <<< "$s"
    echo "== e4m3 r$r $h $s"
    timeout 60 /tmp/$h --dtype e4m3 --transa t --scaling block --seed 1 --iters 50 --no-check --cold --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
done; done > $L/narrow.log
tar czf $OUT/logs.tgz -C $OUT logs
