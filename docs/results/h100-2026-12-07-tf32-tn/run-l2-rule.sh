#!/bin/bash
# swap_tile with the L2 term: the suites where it changes choices (n ≤ 128 rows): TF32 suite 2,
# bf16 suites 1 + 2, e4m3 suites 1 + 2, T,N, one process per shape, the yardstick beside.
mkdir -p .gpu && for f in host tests-gpu; do gunzip -c .gpuc/$f.gz > .gpu/$f; chmod +x .gpu/$f; done
export OUT; nvidia-smi --query-gpu=name --format=csv,noheader
T0=$(date +%s)
step() { echo "$1 rc $2 at $(( $(date +%s) - T0 )) s"; }
summary() { grep -E '^\| [0-9] |geomean|min ×|below' $1 | cut -d'|' -f3-12 | grep -E "×128|×64|×16|×1×|geomean|min|below" ; }
timeout 110 .gpu/host experiment shapes --dtype tf32 --suite 2 --layout tn --no-check --out $OUT/tf32 > $OUT/tf32.log 2>&1
step tf32 $?; summary $OUT/tf32.log
timeout 200 .gpu/host experiment shapes --dtype bf16 --suite 1,2 --layout tn --no-check --out $OUT/bf16 > $OUT/bf16.log 2>&1
step bf16 $?; summary $OUT/bf16.log
timeout 200 .gpu/host experiment shapes --dtype e4m3 --suite 1,2 --no-check --out $OUT/e4m3 > $OUT/e4m3.log 2>&1
step e4m3 $?; summary $OUT/e4m3.log
echo "done at $(( $(date +%s) - T0 )) s"
