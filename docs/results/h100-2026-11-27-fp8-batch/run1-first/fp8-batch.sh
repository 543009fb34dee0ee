#!/bin/bash
# e4m3 with block scales as a packed strided batch (host --batch: the masked layout whose every
# count is n): the grouped FP8 GPU test, one checked batch, then the attention-like shapes beside
# cuBLASLt's block-scaled matmul called once per member (unchecked).
cd "$(dirname "$0")/.."
for f in host tests-gpu; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
./tests-gpu grouped_fp8 --nocapture > $L/fp8-groups-test.log 2>&1
grep -E "test result|panicked" $L/fp8-groups-test.log | head -3
echo "== checked: 512x512x128, 16 members"
./host --variant auto --compare cublas --dtype e4m3 --transa t --scaling block --m 512 --n 512 --k 128 --batch 16 --seed 1 2>&1 | tee $L/checked.log | grep -E '^\| [a-z]|rror|FAIL|PASS' | grep -v '^| variant' | cut -c1-200
for shape in 2048x2048x128 2048x128x2048 512x512x128 128x128x128; do
  set -- ${shape//x/ }
  echo "== $shape, 256 members"
  ./host --variant auto --compare cublas --dtype e4m3 --transa t --scaling block --m $1 --n $2 --k $3 --batch 256 --no-check --seed 1 2>&1 | tee -a $L/batch-$shape.log | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
done | tee $L/batch.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
