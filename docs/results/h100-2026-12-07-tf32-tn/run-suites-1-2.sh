#!/bin/bash
# TF32, T,N, suites 1 + 2 (DeepGEMM's set and Llama-3's layers) with the L2-weighed swap rule:
# the page, tarred so that every file comes back.
mkdir -p .gpu && for f in host; do gunzip -c .gpuc/$f.gz > .gpu/$f; chmod +x .gpu/$f; done
export OUT; nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 .gpu/host experiment shapes --dtype tf32 --suite 1,2 --layout tn --no-check --out page/006-shapes-tf32 > $OUT/tf32.log 2>&1
echo "rc $?"; grep -E "geomean|min ×|below" $OUT/tf32.log | head -8
tar czf $OUT/page.tgz page
