#!/bin/bash
# e4m3 at the suite shapes whose swapped tile the L2 term changed; TF32 N,N at 8192³ by tile;
# the MoE chain's timeline at one token.
mkdir -p .gpu && for f in host; do gunzip -c .gpuc/$f.gz > .gpu/$f; chmod +x .gpu/$f; done
export OUT; nvidia-smi --query-gpu=name --format=csv,noheader
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
T0=$(date +%s)
for mk in "7168 16384" "7168 2048" "10240 8192" "28672 4096" "128256 4096" "32768 512"; do
  set -- $mk
  timeout 25 .gpu/host --variant auto,wgmma-fp8-swap:132,wgmma-fp8-swap:156,wgmma-fp8-swap:164 --dtype e4m3 --transa t --m $1 --n 128 --k $2 --compare cublas --no-check --seed 1 2>&1 | grep -E "^\| [a-z]|rror" | grep -v "^| variant" | sed "s/^/$1x128x$2 /"
done 2>&1 | tee $OUT/e4m3-128.log
echo "e4m3 at $(( $(date +%s) - T0 )) s"
timeout 60 .gpu/host --variant wgmma-tf32:1,wgmma-tf32:4,wgmma-tf32:5,wgmma-tf32:6 --dtype f32 --size 8192 --compare cublas-tf32 --no-check --seed 1 2>&1 | grep -E "^\| [a-z]|rror" | grep -v "^| variant" | tee $OUT/tf32-nn-8192.log
echo "tf32 at $(( $(date +%s) - T0 )) s"
timeout 60 .gpu/host experiment decode --model moe --tokens 1 --launches 5 --timeline --out $OUT/moe-timeline > $OUT/moe-timeline.log 2>&1
grep -E '^\| ' $OUT/moe-timeline.log | head -12
echo "done at $(( $(date +%s) - T0 )) s"
