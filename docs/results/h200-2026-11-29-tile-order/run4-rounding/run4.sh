#!/bin/bash
# The 16-bit kernels against the emulator, bit for bit, each kernel in its first layout (the
# swapped decode kernels in T,N).
set -u
cd "$(dirname "$0")/.."
xz -dc run/tests-gpu.xz > /tmp/tests-gpu && chmod +x /tmp/tests-gpu
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
timeout 400 /tmp/tests-gpu --exact the_16_bit_kernels_round_as_the_emulator_does --test-threads 1 --nocapture 2>&1 | tail -80 | tee $L/rounding.log
