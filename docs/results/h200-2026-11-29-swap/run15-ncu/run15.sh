#!/bin/bash
# ncu: wgmma-swap against cuBLAS's decode kernels, L2 and DRAM throughput.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-swap.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
M=gpu__time_duration.sum,launch__grid_size,launch__cluster_dim_x,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,dram__bytes_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
for s in 2112x64x7168:wgmma-swap:132 6144x64x4096:wgmma-swap:148 6144x16x4096:wgmma-swap:148 4096x128x4096:wgmma-swap:32; do
  IFS=: read shape v t <<< "$s"
  IFS=x read m n k <<< "$shape"
  echo "== ncu $shape"
  timeout 150 ncu --clock-control none --cache-control all -k regex:'gemm|nvjet|sm90|cutlass|xmma' --metrics $M --csv \
    /tmp/host --dtype bf16 --transa t --seed 1 --no-check --iters 2 --warmup 1 --variant $v:$t --compare cublas --m $m --n $n --k $k 2>/dev/null \
    | grep -E '^"' | python3 -c '
import csv,sys,collections
rows=list(csv.reader(sys.stdin)); h=rows[0]; i=h.index("Kernel Name"); mn=h.index("Metric Name"); mv=h.index("Metric Value"); idx=h.index("ID")
d=collections.OrderedDict()
for r in rows[1:]:
    d.setdefault((r[idx],r[i][:50]),{})[r[mn]]=r[mv]
for (k,name),m in d.items():
    print(k,name,"|",m.get("gpu__time_duration.sum"),"ns | grid",m.get("launch__grid_size"),"cl",m.get("launch__cluster_dim_x"),"| dram%",m.get("dram__throughput.avg.pct_of_peak_sustained_elapsed"),"| L2%",m.get("lts__throughput.avg.pct_of_peak_sustained_elapsed"),"| L2 bytes",m.get("lts__t_bytes.sum"),"| dram rd",m.get("dram__bytes_read.sum"),"| sm%",m.get("sm__throughput.avg.pct_of_peak_sustained_elapsed"))
'
done 2>&1 | tee $L/ncu.log
tar czf $OUT/logs.tgz -C $OUT logs
