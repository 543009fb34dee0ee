#!/bin/bash
# Round 5: the GPU tests of the block-scaled groups and the library's FP8 (auto now takes
# wgmma-fp8-block:8 for groups), and DeepGEMM's grouped sets at 7168 x 2048 with auto, :6, :8.
cd "$(dirname "$0")/.."
for f in host tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
cd ..
mkdir -p $OUT/r5
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/r5/device.txt
timeout 200 .gpu/tests-gpu grouped_fp8 --nocapture > $OUT/r5/grouped-test.log 2>&1; grep -E "test result|panicked|auto" $OUT/r5/grouped-test.log | head
timeout 120 .gpu/tests-gpu the_library_runs_fp8 --nocapture > $OUT/r5/library-test.log 2>&1; grep -E "test result|panicked" $OUT/r5/library-test.log
for gm in "4 8192" "8 4096" "masked 1 1024" "masked 2 512" "masked 4 256"; do
  case "$gm" in masked*) layout=--masked; gm=${gm#masked } ;; *) layout= ;; esac
  g=${gm% *}; tokens=${gm#* }
  echo "== m=7168 k=2048 groups=$g group-m=$tokens $layout"
  timeout 60 .gpu/host --variant auto,wgmma-fp8-block:6,wgmma-fp8-block:8 --compare cublas --dtype e4m3 --scaling block --transa t --m 7168 --k 2048 --groups $g --group-m $tokens $layout --seed 1 2>&1 | grep -E '^\| [a-z]|^(E|e)rror' | grep -v '^| variant'
done > $OUT/r5/fp8-groups.log
cat $OUT/r5/fp8-groups.log
tar czf $OUT/r5.tgz -C $OUT r5 && rm -rf $OUT/r5
