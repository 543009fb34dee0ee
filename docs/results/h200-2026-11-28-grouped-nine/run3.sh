#!/bin/bash
# The final build (host): the consumers' walk votes on whether a tile is there
# (`vote.sync.all`, a uniform predicate to ptxas), `:9` walks groups with no spill and its
# loop at HEAD's 113 instructions per slice, `:8`'s loop 261 -> 228 per two slices; `auto`
# takes `:9` or `:8` for the caller's groups by their waves. Against HEAD's build (host-head):
# `:9` and `:8` on four of DeepGEMM's M = 4096 shapes, alternating, two rounds; `:8` on the
# contiguous grouped sets; bf16 grouped (whose walk changed the same way) with auto; then
# DeepGEMM's grouped sets with auto and `:8`, checked, beside cuBLASLt called once per group.
cd "$(dirname "$0")/.."
for f in host host-head; do xz -d -T8 -c run/$f.xz > $f && chmod +x $f; done
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
B="--dtype e4m3 --transa t --scaling block --seed 1"
for round in 1 2; do
for h in host-head host; do
  for s in 4096x4096x7168 7168x4096x16384 2112x4096x7168 24576x4096x1536; do
    set -- ${s//x/ }
    echo "== $round $h $1 x $2 x $3"
    timeout 60 ./$h $B --variant wgmma-fp8-block:9,wgmma-fp8-block:8 --m $1 --n $2 --k $3 --compare cublas --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done
done | tee $L/dense.log
for h in host-head host; do
  for s in "4096 7168" "7168 2048"; do
    set -- $s
    for g in "4 8192" "8 4096"; do
      set -- $1 $2 $g
      echo "== $h e4m3 :8 m=$1 k=$2 groups=$3 group-m=$4"
      timeout 60 ./$h $B --variant wgmma-fp8-block:8 --m $1 --k $2 --groups $3 --group-m $4 --compare cublas --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
      echo "== $h bf16 auto m=$1 k=$2 groups=$3 group-m=$4"
      timeout 60 ./$h --dtype bf16 --transa t --seed 1 --variant auto --m $1 --k $2 --groups $3 --group-m $4 --compare cublas --no-check 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
    done
  done
done | tee $L/groups-before-after.log
OUT=$L timeout 330 bash -c 'source <(sed -n "/^grouped_sets()/,/^}/p" ../xtask/scripts/gpu-session.sh); host=./host; grouped_sets fp8-groups auto,wgmma-fp8-block:8 --compare cublas --dtype e4m3 --scaling block' > /dev/null 2>&1
cat $L/fp8-groups.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
