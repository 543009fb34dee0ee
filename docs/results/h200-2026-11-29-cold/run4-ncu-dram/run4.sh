#!/bin/bash
# ncu on the decode-sized block-scaled GEMMs: kernel duration and DRAM bytes with ncu's own
# cache flush (clean L2) and with --cold's write before each run (L2 full of dirty lines).
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
B="--dtype e4m3 --transa t --scaling block --seed 1 --no-check --iters 2 --warmup 1"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__cycles_active.avg,smsp__cycles_active.avg.pct_of_peak_sustained_elapsed
for s in 2112x64x7168 7168x64x2048; do
  IFS=x read m n k <<< "$s"
  for cc in all none; do
    c=""; [ $cc = none ] && c=--cold
    echo "== $s cache-control $cc"
    timeout 200 ncu --clock-control none --cache-control $cc -k regex:'gemm|nvjet|sm90|cutlass|xmma' --metrics $M --csv \
      /tmp/host $B $c --variant wgmma-fp8-block-swap:132,wgmma-fp8-block:10,wgmma-fp8-block:8 --compare cublas --m $m --n $n --k $k 2>/dev/null \
      | grep -E '^"' | python3 -c '
import csv,sys,collections
rows=list(csv.reader(sys.stdin)); h=rows[0]; i=h.index("Kernel Name"); mn=h.index("Metric Name"); mv=h.index("Metric Value"); idx=h.index("ID")
d=collections.OrderedDict()
for r in rows[1:]:
    d.setdefault((r[idx],r[i][:60]),{})[r[mn]]=r[mv]
for (k,name),m in d.items():
    print(k,name,"|",m.get("gpu__time_duration.sum"),"ns | dram rd",m.get("dram__bytes_read.sum"),"wr",m.get("dram__bytes_write.sum"),"| dram%",m.get("dram__throughput.avg.pct_of_peak_sustained_elapsed"),"| L2",m.get("lts__t_bytes.sum"),"| smsp act%",m.get("smsp__cycles_active.avg.pct_of_peak_sustained_elapsed"))
'
  done
done 2>&1 | tee $L/ncu.log
tar czf $OUT/logs.tgz -C $OUT logs
