#!/bin/bash
# The store path at k = 16 (2048 x 2048, 1 024 members, bf16): how the writes reach L2 and
# DRAM, wgmma-queue:3 against cuBLAS's kernel.
set -u
cd .gpu && xz -dc run/host.xz > host && chmod +x host && cd ..
M="gpu__time_duration.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_requests_op_write.sum,lts__t_sectors_op_write.sum,l1tex__m_l1tex2xbar_write_bytes.sum,lts__average_t_sector_srcunit_tex_op_write_hit_rate.pct,lts__d_sectors_fill_sysmem.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__xbar2lts_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_membar_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_sleeping_per_warp_active.pct,smsp__warp_issue_stalled_misc_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct"
timeout 200 ncu --metrics $M -k regex:gemm_wgmma -c 1 .gpu/host --variant wgmma-queue:3 --dtype bf16 --m 2048 --n 2048 --k 16 --batch 1024 --seed 1 --no-check --iters 1 --warmup 0 > $OUT/ncu-queue.txt 2>&1
timeout 200 ncu --metrics $M -k regex:nvjet -c 1 .gpu/host --variant cublas --dtype bf16 --m 2048 --n 2048 --k 16 --batch 1024 --seed 1 --no-check --iters 1 --warmup 0 > $OUT/ncu-cublas.txt 2>&1
for f in queue cublas; do echo "== $f"; grep -E "nvjet|gemm_wgmma|duration|dram__|lts__|l1tex__|smsp__" $OUT/ncu-$f.txt | grep -v "==PROF" ; done
