#!/bin/bash
# The packed walk (MoE chain, grouped tests, fp8 cursor), the 128-token timeline, and TF32
# suite 2 T,N before the TF32 T,N kernel (moved to ../h100-2026-12-07-tf32-tn/). Bundle of
# 3a3bd39, H100 80GB HBM3; `.gpuc` holds the gzipped host and tests-gpu.
mkdir -p .gpu && for f in host tests-gpu; do gunzip -c .gpuc/$f.gz > .gpu/$f; chmod +x .gpu/$f; done
export OUT; nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
timeout 110 .gpu/host experiment decode --model moe --tokens 1,16 --out $OUT/decode-moe > $OUT/decode-moe.log 2>&1
timeout 60 .gpu/tests-gpu --nocapture grouped_gemms_match > $OUT/gpu-tests-groups.log 2>&1
timeout 80 .gpu/tests-gpu --nocapture grouped_fp8 > $OUT/gpu-tests-fp8-groups.log 2>&1
timeout 40 compute-sanitizer --tool memcheck .gpu/host --variant wgmma-swap:464,wgmma-swap:564 --dtype bf16 --transa t --m 520 --k 1000 --groups 6 --group-m 40 --masked --seed 1 --iters 1 --warmup 0 > $OUT/swap-sanitize.log 2>&1
timeout 100 .gpu/host experiment decode --model llama3 --tokens 64,128 --launches 5 --timeline --out $OUT/decode-timeline > $OUT/decode-timeline.log 2>&1
timeout 130 .gpu/host experiment shapes --dtype tf32 --suite 2 --layout tn --no-check --out $OUT/tf32-suite2-tn > $OUT/tf32-suite2-tn.log 2>&1
