#!/bin/bash
# cuBLAS's kernel for bf16's short-k batch, its SASS as ncu prints it (nvjet kernels are not in
# the library's fatbin under their names): how its epilogue stores C.
set -u
cd .gpu && xz -dc run/host.xz > host && chmod +x host && cd ..
timeout 200 ncu --section SourceCounters --page source --print-source sass -k regex:nvjet -c 1 .gpu/host --variant cublas --dtype bf16 --m 2048 --n 2048 --k 16 --batch 132 --seed 1 --no-check --iters 1 --warmup 0 > $OUT/cublas-ncu-sass.txt 2>&1
echo "lines: $(wc -l < $OUT/cublas-ncu-sass.txt)"
for op in UTMASTG UTMALDG UBLKCP "STG.E" "STG.E.128" STS STSM LDS LDSM HGMMA SYNCS "BAR.SYNC" "BAR.ARV" UTMACMDFLUSH DEPBAR MEMBAR FENCE; do
  printf "%-14s %s\n" "$op" "$(grep -c "$op" $OUT/cublas-ncu-sass.txt)"
done
grep -m8 "UTMASTG\|STG\|STSM" $OUT/cublas-ncu-sass.txt | cut -c1-160
xz -T4 -6 $OUT/cublas-ncu-sass.txt
