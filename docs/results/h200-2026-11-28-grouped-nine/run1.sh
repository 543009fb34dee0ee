#!/bin/bash
# wgmma-fp8-block:9 opened to grouped GEMMs (host; it then spills 16/24 bytes) against HEAD's
# build (host-head, :9 without groups): :9 on four of DeepGEMM's M = 4096 shapes, alternating,
# two rounds; then DeepGEMM's grouped sets with :8 (auto's grouped choice) and :9, checked,
# beside cuBLASLt's block-scaled matmul called once per group.
cd "$(dirname "$0")/.."
for f in host host-head; do [ -f run/$f.xz ] && xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
for round in 1 2; do
for h in host-head host; do
  for s in 4096x4096x7168 7168x4096x16384 2112x4096x7168 24576x4096x1536; do
    set -- ${s//x/ }
    echo "== $round $h $1 x $2 x $3"
    timeout 60 ./$h $B --variant wgmma-fp8-block:9 --m $1 --n $2 --k $3 --compare cublas --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done
done | tee $L/dense.log
OUT=$L timeout 330 bash -c 'source <(sed -n "/^grouped_sets()/,/^}/p" ../xtask/scripts/gpu-session.sh); host=./host; grouped_sets fp8-groups wgmma-fp8-block:8,wgmma-fp8-block:9 --compare cublas --dtype e4m3 --scaling block' > /dev/null 2>&1
cat $L/fp8-groups.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
