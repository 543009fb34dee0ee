#!/bin/bash
# Where the write stream of bf16's short-k batch goes: ncu's sections on wgmma-queue:1 and on
# cuBLAS's kernel, 1 024 members of 2048 x 2048 x 128.
set -u
cd .gpu && xz -dc run/host.xz > host && chmod +x host && cd ..
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats"
M="--metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_op_write.sum,l1tex__m_xbar2l1tex_read_bytes.sum,smsp__cycles_active.avg,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_op_write_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed"
timeout 240 ncu $S $M -k regex:gemm_wgmma -c 1 .gpu/host --variant wgmma-queue:1 --dtype bf16 --m 2048 --n 2048 --k 128 --batch 1024 --seed 1 --no-check > $OUT/ncu-queue.txt 2>&1
timeout 240 ncu $S $M -k regex:nvjet -c 1 .gpu/host --variant cublas --dtype bf16 --m 2048 --n 2048 --k 128 --batch 1024 --seed 1 --no-check > $OUT/ncu-cublas.txt 2>&1
grep -E "Duration|DRAM Throughput|Memory Throughput|dram__|lts__t_sector|Warp Cycles Per Issued|Issued Warp|No Eligible|Registers|Block Size|Grid Size|Stall|stall" $OUT/ncu-queue.txt | head -40
echo ======
grep -E "Duration|DRAM Throughput|Memory Throughput|dram__|lts__t_sector|Warp Cycles Per Issued|Issued Warp|No Eligible|Registers|Block Size|Grid Size|Stall|stall" $OUT/ncu-cublas.txt | head -40
