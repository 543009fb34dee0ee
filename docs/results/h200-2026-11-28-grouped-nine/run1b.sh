#!/bin/bash
# run1.sh's grouped part again (its path to the session script was wrong).
cd "$(dirname "$0")/.."
[ -x host ] || { xz -d -T8 -c run/host.xz > host && chmod +x host; }
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
OUT=$L timeout 400 bash -c 'source <(sed -n "/^grouped_sets()/,/^}/p" ../xtask/scripts/gpu-session.sh); host=./host; grouped_sets fp8-groups wgmma-fp8-block:8,wgmma-fp8-block:9 --compare cublas --dtype e4m3 --scaling block' > /dev/null 2>&1
cat $L/fp8-groups.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
