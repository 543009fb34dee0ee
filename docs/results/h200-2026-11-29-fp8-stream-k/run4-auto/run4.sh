#!/bin/bash
# The build as committed (host-new: the swapped kernels' stream-k grids in equal parts, auto's
# FP8 rule taking them) against host-sk2 (HEAD's rule, the FP8 stream-k tiles as a hybrid grid,
# bf16's stream-k as HEAD), cold, two rounds, builds in turn; the GPU tests first.
set -u
cd "$(dirname "$0")/.."
for h in host-sk2 host-new; do xz -dc run/$h.xz > /tmp/$h && chmod +x /tmp/$h; done
xz -dc run/tests-gpu.xz > /tmp/tests-gpu && chmod +x /tmp/tests-gpu
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
row() { grep -E '^\| [a-z]|rror:|FAIL|panic' | grep -v '^| variant' | cut -c1-120; }
for t in the_fp8_kernels_match_the_reference_on_the_gpu fp8_wgmma_accumulates_as_the_emulator_does grouped_fp8_gemms_match_the_f64_reference the_library_runs_fp8_with_its_scales_on_device_buffers plans_enqueue_into_a_cuda_graph_without_allocating_or_waiting the_amax_epilogue_replays_in_a_cuda_graph; do
  timeout 300 /tmp/tests-gpu --exact $t --test-threads 1 2>&1 | grep -E "^test |test result|captured and replayed|panicked" 
done > $L/tests.log 2>&1
F="2112x64x7168 24576x64x1536 32768x64x512 7168x64x16384 4096x64x7168 7168x64x2048 2112x128x7168 24576x128x1536 32768x128x512 7168x128x16384 4096x128x7168 7168x128x2048 1024x64x7168 1536x64x7168 3072x64x7168 1024x128x7168 1536x128x7168 2112x64x4096"
Bf="2112x1x7168 2112x16x7168 2112x64x7168 1024x64x4096 2112x128x7168 4096x1x4096 1024x128x4096"
for r in 1 2; do for h in host-sk2 host-new; do
  for s in $F; do
    IFS=x read m n k <<< "$s"
    echo "== e4m3 r$r $h $s"
    timeout 60 /tmp/$h --dtype e4m3 --transa t --scaling block --seed 1 --iters 50 --no-check --cold --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
  for s in $Bf; do
    IFS=x read m n k <<< "$s"
    echo "== bf16 r$r $h $s"
    timeout 60 /tmp/$h --dtype bf16 --transa t --seed 1 --iters 50 --no-check --cold --variant auto --compare cublas --m $m --n $n --k $k 2>&1 | row
  done
done; done > $L/auto.log
tar czf $OUT/logs.tgz -C $OUT logs
