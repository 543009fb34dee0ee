#!/bin/bash
# Where the swapped kernel's warps wait at 2112 x 64 x 7168 (cold L2: ncu's flush), against
# cuBLASLt's kernel: warp states and per-SASS-instruction stall samples.
set -u
cd "$(dirname "$0")/.."
xz -dc run/host-new.xz > /tmp/host && chmod +x /tmp/host
L=$OUT/logs; mkdir -p $L
B="--dtype e4m3 --transa t --scaling block --seed 1 --no-check --iters 1 --warmup 0 --m 2112 --n 64 --k 7168"
ncu --clock-control none --warp-sampling-interval 0 -k regex:gemm_wgmma --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis -o $L/swap /tmp/host $B --variant wgmma-fp8-block-swap:132 > $L/ncu-run.log 2>&1
ncu --clock-control none --warp-sampling-interval 0 -k regex:'nvjet|sm90|cutlass' --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis -o $L/lt /tmp/host $B --variant cublas >> $L/ncu-run.log 2>&1
ncu --import $L/swap.ncu-rep --page details > $L/swap-details.txt 2>&1
ncu --import $L/lt.ncu-rep --page details > $L/lt-details.txt 2>&1
ncu --import $L/swap.ncu-rep --page source --csv --print-source sass > $L/swap-src.csv 2>&1
python3 - $L/swap-src.csv <<'PY' | tee $L/swap-stalls.txt
import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
h=None
for i,r in enumerate(rows):
    if 'Source' in r and any('Warp Stall Sampling (All' in x for x in r): h=i; break
hd=rows[h]; si=hd.index('Source'); wi=[j for j,x in enumerate(hd) if x.startswith('Warp Stall Sampling (All')][0]
stall=[j for j,x in enumerate(hd) if x.startswith('stall_')]
data=[r for r in rows[h+1:] if len(r)==len(hd)]
tot=sum(float(r[wi] or 0) for r in data)
print('total samples',tot)
top=sorted(data,key=lambda r:-float(r[wi] or 0))[:25]
for r in top:
    reasons=sorted(((float(r[j] or 0),hd[j]) for j in stall),reverse=True)[:3]
    print(f"{100*float(r[wi])/tot:5.1f}% {r[si][:70]:70s} {reasons}")
PY
grep -E "Duration|Warp Cycles Per Issued|No Eligible|Issued Warp|Active Warps Per|DRAM Throughput|L2 Hit" $L/swap-details.txt $L/lt-details.txt
tar czf $OUT/logs.tgz -C $OUT logs
