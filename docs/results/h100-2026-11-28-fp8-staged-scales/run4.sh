#!/bin/bash
# Round 2: the sanitizer and edge checks of :8/:9, DeepGEMM's dense set (auto with :8/:9 beside
# :6/:7 and cuBLASLt's block-scaled matmul), the grouped sets with :6 and :8.
cd "$(dirname "$0")/.."
for f in host tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
cd ..
B="--dtype e4m3 --transa t --scaling block --seed 1"
mkdir -p $OUT/r2
for t in 8 9; do
timeout 120 compute-sanitizer --tool memcheck .gpu/host --variant wgmma-fp8-block --tile $t $B --m 264 --n 392 --k 1008 > $OUT/r2/sanitize$t.log 2>&1
grep -E "ERROR SUMMARY|PASS|FAIL" $OUT/r2/sanitize$t.log | tail -2
done
.gpu/host --variant wgmma-fp8-block:6,wgmma-fp8-block:8,wgmma-fp8-block:7,wgmma-fp8-block:9 --compare cublas $B --m 1000 --n 520 --k 1312 2>&1 | grep -E 'PASS|FAIL|rror' | cut -c1-110 | tee $OUT/r2/edge.log
OUT=$OUT/r2 FP8_DENSE_VARIANTS=auto,wgmma-fp8-block:6,wgmma-fp8-block:7,wgmma-fp8-block:8,wgmma-fp8-block:9 timeout 300 bash xtask/scripts/gpu-session.sh fp8-dense > /dev/null 2>&1
cat $OUT/r2/fp8-dense.log
grep -c PASS $OUT/r2/fp8-dense-full.log; grep -c FAIL $OUT/r2/fp8-dense-full.log
OUT=$OUT/r2 FP8_GROUP_VARIANTS=wgmma-fp8-block:6,wgmma-fp8-block:8 timeout 200 bash -c 'source <(sed -n "/^grouped_sets()/,/^}/p" xtask/scripts/gpu-session.sh); host=.gpu/host; grouped_sets fp8-groups wgmma-fp8-block:6,wgmma-fp8-block:8 --compare cublas --dtype e4m3 --scaling block' > /dev/null 2>&1
cat $OUT/r2/fp8-groups.log
tar czf $OUT/r2.tgz -C $OUT r2 && rm -rf $OUT/r2
