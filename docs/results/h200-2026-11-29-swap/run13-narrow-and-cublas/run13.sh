#!/bin/bash
# bf16 decode, cold: every narrow tile and the wide kernels beside cuBLAS; then ncu on cuBLAS's
# kernel and ours (names, grids, durations, DRAM) at three shapes.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-final.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
V=auto,wgmma-narrow:16,wgmma-narrow:32,wgmma-narrow:64,wgmma-narrow:128,wgmma-layouts:2,wgmma-stream-k:1
for s in 6144x16x4096 6144x64x4096 6144x128x4096 28672x16x4096 28672x128x4096 4096x64x14336 4096x128x14336 2112x64x1024; do
  IFS=x read m n k <<< "$s"
  echo "== cold $s"
  timeout 90 /tmp/host --dtype bf16 --transa t --seed 1 --iters 50 --no-check --cold --variant $V --compare cublas --m $m --n $n --k $k 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | cut -c1-110
done | tee $L/sweep.log
M=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__cluster_dim_x,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg
for s in 2112x64x1024 6144x64x4096 6144x128x4096; do
  IFS=x read m n k <<< "$s"
  echo "== ncu $s"
  timeout 150 ncu --clock-control none --cache-control all -k regex:'gemm|nvjet|sm90|cutlass|xmma|narrow|layouts|stream' --metrics $M --csv \
    /tmp/host --dtype bf16 --transa t --seed 1 --no-check --iters 2 --warmup 1 --variant auto,wgmma-layouts:2 --compare cublas --m $m --n $n --k $k 2>/dev/null \
    | grep -E '^"' | python3 -c '
import csv,sys,collections
rows=list(csv.reader(sys.stdin)); h=rows[0]; i=h.index("Kernel Name"); mn=h.index("Metric Name"); mv=h.index("Metric Value"); idx=h.index("ID")
d=collections.OrderedDict()
for r in rows[1:]:
    d.setdefault((r[idx],r[i][:90]),{})[r[mn]]=r[mv]
for (k,name),m in d.items():
    print(k,name,"|",m.get("gpu__time_duration.sum"),"ns | grid",m.get("launch__grid_size"),"x",m.get("launch__block_size"),"cl",m.get("launch__cluster_dim_x"),"| dram rd",m.get("dram__bytes_read.sum"),"| dram%",m.get("dram__throughput.avg.pct_of_peak_sustained_elapsed"))
'
done 2>&1 | tee $L/ncu.log
tar czf $OUT/logs.tgz -C $OUT logs
