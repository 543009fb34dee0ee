#!/bin/bash
# every_variant_matches_the_reference_on_the_gpu with the T,N-only kernels' refusal arm.
set -u
cd "$(dirname "$0")/.."
xz -dc run/tests-gpu.xz > /tmp/tests-gpu && chmod +x /tmp/tests-gpu
L=$OUT/logs; mkdir -p $L
timeout 300 /tmp/tests-gpu --exact every_variant_matches_the_reference_on_the_gpu --test-threads 1 --nocapture 2>&1 | grep -E "^test |test result|GPU runs|failures|panicked|^on " | cut -c1-300 > $L/every-variant.txt
cat $L/every-variant.txt
