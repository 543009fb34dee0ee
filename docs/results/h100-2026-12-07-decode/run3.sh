#!/bin/bash
# The grouped swap tiles on the packed walk: decode's MoE chain, the grouped test, sanitizer.
mkdir -p .gpu && for f in host tests-gpu; do gunzip -c .gpuc/$f.gz > .gpu/$f; chmod +x .gpu/$f; done
export OUT; nvidia-smi --query-gpu=name --format=csv,noheader
T0=$(date +%s)
timeout 100 .gpu/host experiment decode --model moe --tokens 1,16 --out $OUT/decode-moe > $OUT/decode-moe.log 2>&1
echo "decode rc $? at $(( $(date +%s) - T0 )) s"; grep -E '^\| [0-9]' $OUT/decode-moe.log
timeout 60 .gpu/tests-gpu --nocapture grouped_gemms_match > $OUT/gpu-tests-groups.log 2>&1
echo "tests rc $? at $(( $(date +%s) - T0 )) s"; grep -E "^test |test result" $OUT/gpu-tests-groups.log | grep -v "running for"
timeout 30 compute-sanitizer --tool memcheck .gpu/host --variant wgmma-swap:464,wgmma-swap:564 --dtype bf16 --transa t --m 520 --k 1000 --groups 6 --group-m 40 --masked --seed 1 --iters 1 --warmup 0 > $OUT/swap-sanitize.log 2>&1
echo "sanitize rc $? at $(( $(date +%s) - T0 )) s"; grep -E "ERROR SUMMARY|^\| [a-z]" $OUT/swap-sanitize.log | grep -v "^| variant"
timeout 25 .gpu/host --variant wgmma-layouts:2,wgmma-swap:464 --compare cublas --dtype bf16 --transa t --m 4096 --k 7168 --groups 8 --group-m 1 --masked --no-check --seed 1 2>&1 | grep -E '^\| [a-z]' | grep -v '^| variant'
echo "done at $(( $(date +%s) - T0 )) s"
