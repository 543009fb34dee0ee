#!/bin/bash
# Run 2 (H100): unpack, the tests not yet run, decode's MoE chain, the grouped tiles at MoE
# decode shapes, the public bf16 suite. (Run 1 was `gpu-session.sh tests decode decode-sanitize`.)
mkdir -p .gpu && for f in host tests-gpu; do gunzip -c .gpuc/$f.gz > .gpu/$f; chmod +x .gpu/$f; done
cp .gpuc/gpu-session.sh .gpu/; export OUT
nvidia-smi --query-gpu=name --format=csv,noheader
T0=$(date +%s)
timeout ${TESTS_S:-170} .gpu/tests-gpu --nocapture ${TESTS:-the_amax_epilogue the_fp8_kernels_match the_kernels_clock the_library_runs_fp8 the_library_runs_on_device the_tuner_times grouped_gemms_match} > $OUT/gpu-tests-rest.log 2>&1
echo "tests rc $? at $(( $(date +%s) - T0 )) s"; grep -E "^test |test result" $OUT/gpu-tests-rest.log | grep -v "running for"
timeout ${DECODE_S:-110} .gpu/host experiment decode --model moe --out $OUT/decode-moe > $OUT/decode-moe.log 2>&1
echo "decode rc $? at $(( $(date +%s) - T0 )) s"; grep -E '^\| [0-9]' $OUT/decode-moe.log
timeout 60 .gpu/host experiment decode --model llama3 --tokens 64,128 --launches 40 --out $OUT/decode-llama-128 > $OUT/decode-llama-128.log 2>&1
echo "llama 128 rc $? at $(( $(date +%s) - T0 )) s"; grep -E '^\| [0-9]' $OUT/decode-llama-128.log
for shape in "4096 7168" "7168 2048"; do set -- $shape
  for gm in "8 1" "100 2" "233 8"; do set -- $1 $2 $gm
    echo "== m=$1 k=$2 groups=$3 group-m=$4 masked"
    timeout 40 .gpu/host --variant wgmma-layouts:2,wgmma-swap:432,wgmma-swap:464,wgmma-swap:532,wgmma-swap:564,auto --compare cublas --dtype bf16 --transa t --m $1 --k $2 --groups $3 --group-m $4 --masked --no-check --seed 1 2>&1 | tee -a $OUT/grouped-swap.log | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
  done
done
echo "grouped at $(( $(date +%s) - T0 )) s"
left=$(( 575 - ($(date +%s) - T0) ))
[ $left -gt 60 ] && SHAPES_DTYPES=bf16 timeout $left bash .gpu/gpu-session.sh shapes 2>&1 | tail -16
echo "done at $(( $(date +%s) - T0 )) s"
