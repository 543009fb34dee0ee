#!/bin/bash
# The FP8 masked layout's (and a batch's) persistent grid sized by every member's tiles, not one
# member's: DeepGEMM's masked sets and the e4m3 batches, the build before (host-prefix) and this
# one in the same job, each beside cuBLASLt's block-scaled matmul called once per group.
cd "$(dirname "$0")/.."
for f in host host-prefix tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
./tests-gpu grouped_fp8 --nocapture > $L/fp8-groups-test.log 2>&1
grep -E "test result|panicked" $L/fp8-groups-test.log | head -3
timeout 150 compute-sanitizer --tool memcheck ./tests-gpu grouped_fp8 > $L/fp8-groups-sanitize.log 2>&1
grep -E "ERROR SUMMARY|test result" $L/fp8-groups-sanitize.log | tail -2
for nk in "4096 7168" "7168 2048"; do
  set -- $nk
  for gm in "1 1024" "2 512" "4 256"; do
    for h in host-prefix host; do
      echo "== $h m=$1 k=$2 masked groups=${gm% *} group-m=${gm#* }"
      ./$h --variant auto --compare cublas --dtype e4m3 --scaling block --transa t --m $1 --k $2 --groups ${gm% *} --group-m ${gm#* } --masked --seed 1 2>&1 | grep -E '^\| [a-z]|rror|counts' | grep -v '^| variant'
    done
  done
done | tee $L/masked.log
for shape in 2048x2048x128 2048x128x2048 512x512x128 128x128x128; do
  set -- ${shape//x/ }
  for h in host-prefix host; do
    echo "== $h $shape, 256 members"
    ./$h --variant auto --compare cublas --dtype e4m3 --transa t --scaling block --m $1 --n $2 --k $3 --batch 256 --no-check --seed 1 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done | tee $L/batch.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
