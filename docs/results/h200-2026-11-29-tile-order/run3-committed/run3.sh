#!/bin/bash
# The tile order along n as committed: every GPU test (each variant against the f64 reference,
# batches, groups, FP8, epilogues, graphs), then HEAD's build (host-g8) and this one alternating
# at six problems, two rounds.
set -u
cd "$(dirname "$0")/.."
for v in host-g8 host-new tests-gpu; do xz -dc run/$v.xz > /tmp/$v && chmod +x /tmp/$v; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
timeout 420 /tmp/tests-gpu --test-threads 1 2>&1 | grep -E "^test |test result|panicked|FAIL" | tee $L/tests.log
row() { grep -E '^\| [a-z]|rror|FAIL|panic|mismatch' | grep -v '^| variant' | cut -c1-150; }
for r in 1 2; do
  for v in host-g8 host-new; do
    for s in 6144x4096x4096 28672x4096x4096; do set -- ${s//x/ }
      echo "== r$r $v gelu $s"; timeout 60 /tmp/$v --variant auto --compare cublas --dtype bf16 --transa t --m $1 --n $2 --k $3 --epilogue bias,gelu --seed 1 --no-check 2>&1 | row; done
    for s in 4096x4096x4096 8192x8192x1024; do set -- ${s//x/ }
      echo "== r$r $v bf16-nn $s"; timeout 60 /tmp/$v --variant auto --compare cublas --dtype bf16 --m $1 --n $2 --k $3 --seed 1 --no-check 2>&1 | row; done
    for s in 2112x4096x7168 7168x4096x16384; do set -- ${s//x/ }
      echo "== r$r $v e4m3 $s"; timeout 60 /tmp/$v --variant auto --compare cublas --dtype e4m3 --transa t --scaling block --m $1 --n $2 --k $3 --seed 1 --no-check 2>&1 | row; done
  done
done | tee $L/timing.log
tar czf $OUT/logs.tgz -C $OUT logs
