#!/usr/bin/env bash
# Runs on the GPU machine (no Rust there): `cargo xtask gpu-bundle` built the host binary and
# the GPU test binaries here and put them, with a copy of this script, into .gpu/ (its BUNDLE.md
# says what and from which commit). Usage, from the repository's root:
#   bash xtask/scripts/gpu-session.sh STEP…     (or: bash .gpu/gpu-session.sh STEP…)
# Steps: the names of the `case` below; any other argument is passed to host as it is.
# Logs go to $OUT (or ./gpu-out); the short tables come last.
set -uo pipefail
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export MATMUL_NUM_THREADS=${MATMUL_NUM_THREADS:-$(nproc)}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
# The bundle: the folder of this script when it is the bundle's copy, else .gpu/.
here=$(dirname "$0")
if [ -x "$here/host" ]; then bundle=$here; else bundle=.gpu; fi
host=$bundle/host
# DeepGEMM's grouped sets, TN (m = N, k = K, n = the tokens): contiguous (groups, tokens per
# group) and masked (groups, capacity; counts drawn between M/2 and M), for the variants $2 and
# the host's other arguments after them; logs $OUT/$1-N-K.log, the short table $OUT/$1.log.
grouped_sets() {
  local name=$1 variants=$2; shift 2
  for nk in "4096 7168" "7168 2048"; do
    set -- $nk "$@"
    for gm in "4 8192" "8 4096" "masked 1 1024" "masked 2 512" "masked 4 256"; do
      case "$gm" in masked*) layout=--masked; gm=${gm#masked } ;; *) layout= ;; esac
      g=${gm% *}; tokens=${gm#* }
      echo "== m=$1 k=$2 groups=$g group-m=$tokens $layout"
      $host --variant "$variants" "${@:3}" --transa t --m $1 --k $2 --groups $g --group-m $tokens $layout --seed 1 2>&1 | tee -a "$OUT/$name-$1-$2.log" | grep -E '^\| [a-z]|^(E|e)rror|counts' | grep -v '^| variant'
    done
    shift 2
  done | tee "$OUT/$name.log"
}
for step in "$@"; do
  case "$step" in
    parallel)
      # Tensor parallelism on every GPU of the host (PARALLEL_GPUS, default all): the bar's eight
      # layers, each form's sequential and chunked runs with the parts and the one-GPU yardstick.
      export NCCL_NVLS_ENABLE=0
      gpus=${PARALLEL_GPUS:-$(nvidia-smi -L | wc -l)}
      nvidia-smi topo -m 2>&1 | tee "$OUT/topo.txt" | head -8
      for shape in ${PARALLEL_SHAPES:-"allgather 8192 28672 8192" "allgather 8192 10240 8192" "allgather 2048 28672 8192" "allgather 2048 10240 8192" "reducescatter 8192 8192 28672" "reducescatter 8192 8192 8192" "reducescatter 2048 8192 28672" "reducescatter 2048 8192 8192"}; do
        set -- $shape
        $host --parallel $1 --gpus $gpus --tokens $2 --out-features $3 --in-features $4 --parts --seed 1 --json "$OUT/parallel-json/$gpus-$1-$2-$3-$4.json" ${PARALLEL_ARGS:-} 2>&1 | tee "$OUT/parallel-$gpus-$1-$2-$3-$4.log" | grep -v '^\s' | tail -14
      done ;;
    parallel-page)
      # The page of the runs above, beside PyTorch's figures (run parallel and parallel-torch first).
      $host experiment parallel --runs "$OUT/parallel-json" --torch "$OUT/parallel-torch.log" --out "$OUT/007-parallel" 2>&1 | tail -20 ;;
    parallel-fail)
      # A planted failure on the last rank: every rank must stop, with its message, within 30 s.
      gpus=${PARALLEL_GPUS:-$(nvidia-smi -L | wc -l)}
      start=$(date +%s%N)
      $host --parallel allgather --gpus $gpus --tokens 2048 --out-features 10240 --in-features 8192 --fail-rank $((gpus - 1)) 2>&1 | tee "$OUT/parallel-fail.log" | tail -4
      echo "exit status ${PIPESTATUS[0]} after $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$OUT/parallel-fail.log" ;;
    parallel-torch)
      # PyTorch's sequence and fused async-TP ops on the same GPUs, the same layers.
      TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0 python3 "$bundle/tp_torch.py" ${PARALLEL_GPUS:-} 2>&1 | tee "$OUT/parallel-torch.log" | grep -v Warning | tail -12 ;;
    plan)
      # A plan enqueued 1000 times beside cuBLAS (examples/plan.rs), cudarc's buffers
      # (examples/cudarc.rs), and the CUDA-graph test.
      "$bundle/plan" 2>&1 | tee "$OUT/plan.log"
      "$bundle/cudarc" 2>&1 | tee "$OUT/cudarc.log"
      "$bundle/tests-gpu" plans_enqueue_into_a_cuda_graph --nocapture 2>&1 | tee "$OUT/graph.log" | grep -E 'captured|control|test result|panicked' -A2
      "$bundle/tests-gpu" the_library_runs_fp8 --nocapture 2>&1 | tee "$OUT/library-fp8.log" | grep -E 'worst|test result|panicked' -A2 ;;
    epilogue)
      # Fused bias + GELU at Llama-3 8B's layers with 4096 tokens, bf16, TN (m = out features,
      # n = tokens): auto with the epilogue fused, cuBLASLt's GELU_BIAS (cublas with an
      # epilogue), auto's GEMM then a separate bias-GELU kernel (unfused); the GPU test of every
      # epilogue path, under compute-sanitizer too.
      "$bundle/tests-gpu" fused_epilogues --nocapture 2>&1 | tee "$OUT/epilogue-test.log" | grep -E 'test result|panicked' -A2
      timeout 600 compute-sanitizer --tool memcheck "$bundle/tests-gpu" fused_epilogues 2>&1 | tee "$OUT/epilogue-sanitize.log" | grep -E 'ERROR SUMMARY|test result' | tail -2
      for nk in "6144 4096" "4096 4096" "28672 4096" "4096 14336" "128256 4096"; do
        set -- $nk
        echo "== m=$1 n=4096 k=$2"
        $host --variant auto,unfused --compare cublas --dtype bf16 --transa t --m $1 --n 4096 --k $2 --epilogue bias,gelu --seed 1 2>&1 | tee "$OUT/epilogue-$1-$2.log" | grep '^| [a-z]' | grep -v '^| variant'
      done | tee "$OUT/epilogue.log" ;;
    amax)
      # The amax epilogue: the GPU tests (every epilogue case, most with the amax; a plan's
      # enqueue captured into a CUDA graph and replayed twice), under compute-sanitizer too;
      # then Llama-3 8B's layers with 4096 tokens, bias + GELU with and without the amax, each
      # beside cuBLASLt's GELU_BIAS (which has no amax outside FP8) in the same process.
      "$bundle/tests-gpu" amax fused_epilogues --nocapture 2>&1 | tee "$OUT/amax-test.log" | grep -E 'test result|panicked|replay' -A2
      timeout 300 compute-sanitizer --tool memcheck "$bundle/tests-gpu" amax 2>&1 | tee "$OUT/amax-sanitize.log" | grep -E 'ERROR SUMMARY|test result' | tail -2
      for nk in "6144 4096" "4096 4096" "28672 4096" "4096 14336" "128256 4096"; do
        set -- $nk
        for e in bias,gelu bias,gelu,amax; do
          echo "== m=$1 n=4096 k=$2 epilogue=$e"
          $host --variant auto --compare cublas --dtype bf16 --transa t --m $1 --n 4096 --k $2 --epilogue $e --seed 1 2>&1 | tee "$OUT/amax-$1-$2-${e//,/+}.log" | grep -E '^\| [a-z]|amax [0-9]|error' | grep -v '^| variant'
        done
      done | tee "$OUT/amax.log" ;;
    batch)
      # Strided batched GEMM: the GPU test (every kernel that runs a batch, then auto and cuBLAS
      # at 300 members), under compute-sanitizer too; then the attention-like problems of 1024
      # members (batch × heads) beside cuBLAS's strided batched GEMM, NN and TN, bf16.
      "$bundle/tests-gpu" strided_batches --nocapture 2>&1 | tee "$OUT/batch-test.log" | grep -E 'test result|panicked' -A2
      timeout 300 compute-sanitizer --tool memcheck "$bundle/tests-gpu" strided_batches 2>&1 | tee "$OUT/batch-sanitize.log" | grep -E 'ERROR SUMMARY|test result' | tail -2
      for shape in "2048 2048 128" "2048 128 2048" "512 512 64" "128 128 128"; do
        set -- $shape
        for t in n t; do
          for h in ${BATCH_HOSTS:-$host}; do
            echo "== $h m=$1 n=$2 k=$3 transa=$t batch=1024"
            $h --variant auto --compare cublas --dtype bf16 --transa $t --m $1 --n $2 --k $3 --batch 1024 --seed 1 2>&1 | tee -a "$OUT/batch-$1-$2-$3.log" | grep -E '^\| [a-z]|error' | grep -v '^| variant'
          done
        done
      done | tee "$OUT/batch.log" ;;
    batch-wide)
      # Strided batches in f32 and f64 (a layer of the grid per member): the attention-like
      # problems of 1024 members beside cuBLAS's strided batched GEMM, N,N; auto under each
      # contract (checked), then every kernel that runs such a batch (unchecked). f64 leaves out
      # 2048 × 2048 × 128, whose C alone is 34 GB.
      # BATCH_SHAPES: a subset, as MxNxK words.
      for shape in ${BATCH_SHAPES:-2048x2048x128 2048x128x2048 512x512x64 128x128x128}; do
        set -- ${shape//x/ }
        runs="f32:strict f32:fp32-accurate f64:strict"
        [ "$shape" = 2048x2048x128 ] && runs="f32:strict f32:fp32-accurate"
        for run in $runs; do
          echo "== m=$1 n=$2 k=$3 ${run%:*} --math ${run#*:} batch=1024"
          $host --variant auto --compare cublas --dtype ${run%:*} --math ${run#*:} --m $1 --n $2 --k $3 --batch 1024 --seed 1 2>&1 | tee -a "$OUT/batch-wide-$1-$2-$3.log" | grep -E '^\| [a-z]|rror|FAIL' | grep -v '^| variant'
        done
        for run in $runs; do
          [ ${run#*:} = strict ] || continue
          variants=best,gemm128; [ ${run%:*} = f64 ] && variants=best,gemm128,tc-f64
          echo "== m=$1 n=$2 k=$3 ${run%:*} every kernel, batch=1024"
          $host --variant $variants --compare cublas --dtype ${run%:*} --m $1 --n $2 --k $3 --batch 1024 --no-check --seed 1 2>&1 | tee -a "$OUT/batch-wide-$1-$2-$3.log" | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
        done
      done | tee "$OUT/batch-wide.log" ;;
    groups)
      # Grouped GEMM (a mixture-of-experts layer, DeepGEMM's layouts): the GPU test (every kernel
      # that runs groups, then auto and cuBLAS), under compute-sanitizer too; then DeepGEMM's
      # grouped sets in bf16, TN (m = N, k = K, n = the tokens): contiguous (groups, tokens per
      # group) and masked (groups, capacity; counts drawn between M/2 and M), beside cuBLAS's
      # call per group and its grouped GEMM (cublasGemmGroupedBatchedEx).
      "$bundle/tests-gpu" grouped_gemms --nocapture 2>&1 | tee "$OUT/groups-test.log" | grep -E 'test result|panicked' -A2
      timeout 300 compute-sanitizer --tool memcheck "$bundle/tests-gpu" grouped_gemms 2>&1 | tee "$OUT/groups-sanitize.log" | grep -E 'ERROR SUMMARY|test result' | tail -2
      grouped_sets groups auto --compare cublas,cublas-grouped --dtype bf16 ;;
    fp8-groups)
      # The block-scaled e4m3 grouped GEMM: the GPU test (both layouts, every configuration that
      # walks groups, auto, cuBLASLt per group), under compute-sanitizer too; then DeepGEMM's
      # grouped sets (as the step `groups`, e4m3 with 1 × 128 and 128 × 128 scales) beside
      # cuBLASLt called once per group (masked counts in multiples of 16, which it needs).
      "$bundle/tests-gpu" grouped_fp8 --nocapture 2>&1 | tee "$OUT/fp8-groups-test.log" | grep -E 'test result|panicked' -A2
      timeout 300 compute-sanitizer --tool memcheck "$bundle/tests-gpu" grouped_fp8 2>&1 | tee "$OUT/fp8-groups-sanitize.log" | grep -E 'ERROR SUMMARY|test result' | tail -2
      grouped_sets fp8-groups "${FP8_GROUP_VARIANTS:-auto}" --compare cublas --dtype e4m3 --scaling block ;;
    epilogue-plain)
      # The same GEMMs with no epilogue, and the squares, with each host of EPILOGUE_HOSTS (a
      # build before the epilogue beside the bundle's, in one job): what the epilogue's branch costs.
      for shape in "--m 6144 --n 4096 --k 4096" "--m 28672 --n 4096 --k 4096" "--m 4096 --n 4096 --k 14336" "--m 14336 --n 16 --k 4096" "--m 4096 --n 128 --k 4096" "--size 4096" "--size 8192"; do
        for h in ${EPILOGUE_HOSTS:-$host}; do
          echo "== $h $shape"
          $h --variant auto --compare cublas --dtype bf16 --transa t $shape --seed 1 2>&1 | grep '^| [a-z]' | grep -v '^| variant'
        done
      done | tee "$OUT/epilogue-plain.log" ;;
    contract)
      # FP32-accurate across f32's normal range (the GPU test's table), then 3xTF32's speed beside
      # cuBLAS SGEMM at four shapes, with each host of CONTRACT_HOSTS (a build before a change
      # beside the bundle's, in one job).
      "$bundle/tests-gpu" fp32_accurate_keeps_its_contract --nocapture 2>&1 | tee "$OUT/contract.log" | grep -E '^\||test result|panicked' -A2
      for shape in "--size 2048" "--size 4096" "--size 8192" "--m 8192 --n 8192 --k 1024"; do
        for h in ${CONTRACT_HOSTS:-$host}; do
          echo "== $h $shape"
          $h --variant auto,wgmma-3xtf32:1,wgmma-3xtf32:2 --math fp32-accurate $shape --compare cublas 2>&1 | grep '^| [a-z]' | grep -v '^| variant'
        done
      done | tee "$OUT/contract-speed.log" ;;
    first-call)
      # A fresh process with the driver's cache off, as on a new machine or in a container: the
      # whole process's wall time for one small GEMM, loading the embedded SASS, then the same
      # with the PTX given (`--ptx`), which the driver must compile. Then the speed of each at a
      # large size beside cuBLAS in one process: the SASS of ptxas against the driver's JIT.
      echo "| call | kernels | fresh process, ms |" | tee "$OUT/first-call.md"
      echo "|---|---|---:|" | tee -a "$OUT/first-call.md"
      for spec in "v4:sm_90:--variant v4" "bf16:sm_90a:--variant auto --dtype bf16" "fp32-accurate:sm_90a:--variant auto --math fp32-accurate" "e4m3:sm_90a:--variant auto --dtype e4m3 --transa t"; do
        name=${spec%%:*}; rest=${spec#*:}; arch=${rest%%:*}; args=${rest#*:}
        for form in SASS PTX; do
          extra=""; [ $form = PTX ] && extra="--ptx $bundle/ptx/$arch/kernels_gpu.ptx"
          start=$(date +%s%N)
          CUDA_CACHE_DISABLE=1 $host $args --size 256 --no-check --iters 1 --warmup 0 $extra > "$OUT/first-call-$name-$form.log" 2>&1
          status=$?
          echo "| \`$args\` (exit $status) | $form | $(( ($(date +%s%N) - start) / 1000000 )) |" | tee -a "$OUT/first-call.md"
        done
      done
      for spec in "sm_90:--variant v4,v5,gemm128,best --size 4096" "sm_90a:--variant auto --dtype bf16 --size 8192" "sm_90a:--variant auto --math fp32-accurate --size 4096" "sm_90a:--variant auto --dtype e4m3 --transa t --size 8192"; do
        arch=${spec%%:*}; args=${spec#*:}
        for form in SASS PTX; do
          extra=""; [ $form = PTX ] && extra="--ptx $bundle/ptx/$arch/kernels_gpu.ptx"
          echo "== $form: $args" | tee -a "$OUT/sass-vs-jit.log"
          $host $args --compare cublas $extra 2>&1 | tee -a "$OUT/sass-vs-jit.log" | grep '^| [a-z]' | grep -v '^| variant'
        done
      done ;;
    tests)
      for t in "$bundle"/tests-*; do "$t" --nocapture 2>&1 | tee -a "$OUT/gpu-tests.log" | tail -5; done ;;
    foundation)
      $host --variant v0,v1,v3,v4,tiled:16,tiled:8 --both-dtypes --compare cublas --size 4096 2>&1 | tee "$OUT/foundation-4096.log" | tail -30
      $host --variant v0,v1,v3,v4,tiled:16,tiled:8 --both-dtypes --compare cublas --m 1000 --n 1023 --k 999 2>&1 | tee "$OUT/foundation-1000.log" | tail -16 ;;
    progression)
      $host --variant v0,v1,v2,v3,v4,v5,gemm64,gemm128,fynv,alc1,alc2,alc3 --both-dtypes --compare cublas --size 4096 2>&1 | tee "$OUT/progression-4096.log" | tail -32 ;;
    large)
      $host --variant v0,v1,v2,v3,v4,v5,gemm64,gemm128,fynv,alc1,alc2,alc3 --compare cublas --size 8192 --iters 5 --warmup 1 2>&1 | tee "$OUT/progression-8192.log" | tail -16 ;;
    others)
      $host --variant naive,kahan,row-shared,blocked-kahan,basic,blocked,cg-shuffle,cg-regs,cg-tile2x2 --both-dtypes --compare cublas --size 4096 2>&1 | tee "$OUT/others-4096.log" | tail -22 ;;
    best)
      # `best` against cuBLAS and gemm128 at the sizes and shapes of the bar.
      for size in 1024 2048 4096 8192; do
        $host --variant ${BEST:-best:1,best:2,best:3},gemm128 --compare cublas --size $size 2>&1 | tee "$OUT/best-$size.log" | grep '^|'
      done
      for mnk in "8192 8192 1024" "1024 1024 8192" "8192 256 8192"; do
        set -- $mnk
        $host --variant ${BEST:-best:1,best:2,best:3},gemm128 --compare cublas --m $1 --n $2 --k $3 2>&1 | tee "$OUT/best-$1x$2x$3.log" | grep '^|'
      done ;;
    simt)
      # auto, the SIMT steps, best, gemm128 and cuBLAS at every shape of the bar,
      # one process per shape; then f64 at 4096³ beside DGEMM.
      for mnk in "1024 1024 1024" "2048 2048 2048" "4096 4096 4096" "8192 8192 8192" "8192 8192 1024" "1024 1024 8192" "8192 256 8192"; do
        set -- $mnk
        $host --variant ${SIMT:-auto,big-tile:5,big-tile:2,big-tile:1,split-k:2,split-k:4,split-k:8,best:1,gemm128} --compare cublas --m $1 --n $2 --k $3 2>&1 | tee "$OUT/simt-$1x$2x$3.log" | grep '^|'
      done
      $host --variant ${SIMT_F64:-auto,big-tile:5,big-tile:1,big-tile:2,big-tile:3,best:1,gemm128,tc-f64:2} --dtype f64 --compare cublas --size 4096 2>&1 | tee "$OUT/simt-f64-4096.log" | grep '^|' ;;
    simt-ncu)
      # The new kernel's counters beside cuBLAS's and best's at 4096³ (one launch each).
      m=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,launch__registers_per_thread,gpu__time_duration.sum
      for v in ${SIMT_NCU:-big-tile:5 cublas best:1}; do
        log="$OUT/ncu-${v//:/-}.log"  # no ':' in file names: the transfer back drops them
        ncu --clock-control none --launch-count 1 --metrics $m $host --variant $v --size ${NCU_SIZE:-4096} --iters 1 --warmup 0 --no-check > "$log" 2>&1
        echo "ncu $v: exit $?"; grep -E "^    [a-z0-9_]+__[a-z].* [0-9]|^  (sm80|sm90|gemm_)" "$log" | sed 's/  */ /g' | head -30
      done ;;
    source-counters)
      # Per-SASS-instruction stall samples (ncu's source page as CSV, gzipped) of one launch each
      # at 4096³: where in the loop the warps wait, and on what (SOURCE_DTYPE: f32 by default).
      for v in ${SOURCE_VARIANTS:-big-tile:5 cublas}; do
        n=${v//:/-}-${SOURCE_DTYPE:-f32}
        ncu --clock-control none --launch-count 1 --section SourceCounters --section WarpStateStats -o "$OUT/src-$n" $host --variant $v --dtype ${SOURCE_DTYPE:-f32} --size 4096 --iters 1 --warmup 0 --no-check > "$OUT/src-$n.log" 2>&1
        ncu --import "$OUT/src-$n.ncu-rep" --page source --csv --print-source sass > "$OUT/src-$n.csv" 2>&1
        echo "source counters $v: $(wc -l < "$OUT/src-$n.csv") lines"; gzip -f "$OUT/src-$n.csv"; rm -f "$OUT/src-$n.ncu-rep"
      done ;;
    simt-sanitize)
      v=big-tile:1,big-tile:2,big-tile:3,big-tile:4,big-tile:5,big-tile:6,big-tile:7,split-k:4,split-k:3,auto
      for tool in memcheck racecheck synccheck; do
        for shape in "--m 100 --n 67 --k 45 --lda 103" "--m 100 --n 67 --k 44 --lda 104" "--m 512 --n 256 --k 68"; do
          compute-sanitizer --tool $tool --error-exitcode 9 $host --variant $v $shape --beta 0.5 --iters 1 --warmup 0 --both-dtypes > "$OUT/simt-sanitize-$tool.log" 2>&1
          echo "compute-sanitizer $tool ($shape): exit $? ($(grep -c 'check: .*PASS' "$OUT/simt-sanitize-$tool.log") checks passed; $(grep -m1 'SUMMARY' "$OUT/simt-sanitize-$tool.log"))"
        done
      done ;;
    auto-table)
      # `auto`'s table: every candidate at each shape beside cuBLAS; copy
      # $OUT/results/auto-table/auto-table.csv to gpu-gemm/src/auto-table.csv.
      $host experiment auto --out "$OUT/results/auto-table" 2>&1 | tee "$OUT/auto-table.log" | grep -v '^  ' | tail -60 ;;
    tensor-cores)
      # Tensor cores, chapter 1: each variant beside its yardstick, in one process per size.
      for size in 4096 8192; do
        $host --variant ${TC_TF32:-tc-tf32:1,tc-tf32:2,tc-tf32:3,tc-tf32:4,tc-tf32:5,tc-tf32:6,tc-tf32-basic} --compare cublas-tf32,cublas --size $size 2>&1 | tee "$OUT/tc-tf32-$size.log" | grep '^|'
        $host --variant ${TC_3X:-tc-3xtf32:1,tc-3xtf32:2,tc-3xtf32:3,best:1} --compare cublas,cublas-tf32 --size $size 2>&1 | tee "$OUT/tc-3xtf32-$size.log" | grep '^|'
        $host --variant ${TC_F64:-tc-f64:1,tc-f64:2,tc-f64:3,tc-f64:4,tc-f64:5,best:1} --dtype f64 --compare cublas --size $size 2>&1 | tee "$OUT/tc-f64-$size.log" | grep '^|'
      done ;;
    tc-ncu)
      # Bank conflicts, tensor pipe and issue of one launch each at 4096³, beside cuBLAS's.
      m=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
      for v in ${TC_NCU:-tc-tf32:1 cublas-tf32 tc-3xtf32:1 cublas}; do
        ncu --clock-control none --launch-count 1 --metrics $m $host --variant $v --size 4096 --iters 1 --warmup 0 --no-check > "$OUT/ncu-${v//:/-}.log" 2>&1
        echo "ncu $v: exit $?"; grep -E "^  [a-zA-Z_]+.*[0-9]|void|sm80|sm90|gemm_" "$OUT/ncu-${v//:/-}.log" | head -12
      done
      for v in ${TC_NCU_F64:-tc-f64:2 cublas}; do
        ncu --clock-control none --launch-count 1 --metrics $m $host --variant $v --dtype f64 --size 4096 --iters 1 --warmup 0 --no-check > "$OUT/ncu-${v//:/-}-f64.log" 2>&1
        echo "ncu $v f64: exit $?"; grep -E "^  [a-zA-Z_]+.*[0-9]|void|sm80|sm90|gemm_" "$OUT/ncu-${v//:/-}-f64.log" | head -12
      done ;;
    tc-sanitize)
      tc=tc-tf32-basic,tc-tf32:1,tc-tf32:2,tc-tf32:3,tc-tf32:4,tc-tf32:5,tc-tf32:6,tc-3xtf32:1,tc-3xtf32:2,tc-3xtf32:3
      f64=tc-f64:1,tc-f64:2,tc-f64:3,tc-f64:4,tc-f64:5
      for tool in memcheck racecheck synccheck; do
        for shape in "--m 100 --n 67 --k 45 --lda 103" "--m 100 --n 67 --k 44 --lda 104"; do
          compute-sanitizer --tool $tool --error-exitcode 9 $host --variant $tc $shape --ldc 101 --beta 0.5 --iters 1 --warmup 0 > "$OUT/tc-sanitize-$tool.log" 2>&1; r1=$?
          compute-sanitizer --tool $tool --error-exitcode 9 $host --variant $f64 --dtype f64 $shape --ldc 101 --beta 0.5 --iters 1 --warmup 0 >> "$OUT/tc-sanitize-$tool.log" 2>&1; r2=$?
          echo "compute-sanitizer $tool ($shape): exit $r1/$r2 ($(grep -c 'PASS' "$OUT/tc-sanitize-$tool.log") checks passed; $(grep -m1 'SUMMARY' "$OUT/tc-sanitize-$tool.log"))"
        done
      done ;;
    hopper)
      # Tensor cores, chapter 2: the wgmma variants beside cuBLAS TF32 and SGEMM, one process per shape.
      for mnk in ${HOPPER_SHAPES:-"2048 2048 2048" "4096 4096 4096" "8192 8192 8192" "8192 8192 1024"}; do
        set -- ${mnk//x/ }
        $host --variant ${HOPPER:-wgmma-tf32,wgmma-3xtf32,wgmma-tf32-basic,tc-tf32:1} --compare cublas-tf32,cublas --m $1 --n $2 --k $3 2>&1 | tee "$OUT/hopper-$1x$2x$3.log" | grep '^|'
      done ;;
    hopper-ncu)
      # The wgmma pipeline's counters beside cuBLAS TF32's at 4096³ (one launch each).
      m=sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,lts__t_bytes.sum,dram__bytes.sum,lts__t_sector_hit_rate.pct,launch__registers_per_thread,launch__grid_size,launch__shared_mem_per_block_dynamic,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,gpu__time_duration.sum
      for v in ${HOPPER_NCU:-wgmma-tf32 cublas-tf32 wgmma-3xtf32}; do
        log="$OUT/ncu-${v//:/-}.log"
        ncu --clock-control none --launch-count 1 --metrics $m $host --variant $v --size ${NCU_SIZE:-4096} --iters 1 --warmup 0 --no-check > "$log" 2>&1
        echo "ncu $v: exit $?"; grep -E "^    [a-z0-9_]+__[a-z].* [0-9]|^  (sm80|sm90|gemm_)" "$log" | sed 's/  */ /g' | head -30
      done ;;
    hopper-sanitize)
      # TMA kernels need lda, ldb multiples of 4; the basic kernel takes any shape.
      for tool in memcheck racecheck synccheck; do
        for shape in "--m 100 --n 67 --k 44 --lda 104 --ldc 101" "--m 300 --n 520 --k 100 --ldb 104"; do
          compute-sanitizer --tool $tool --error-exitcode 9 $host --variant wgmma-tf32-basic,wgmma-tf32,wgmma-3xtf32 $shape --beta 0.5 --iters 1 --warmup 0 > "$OUT/hopper-sanitize-$tool.log" 2>&1
          echo "compute-sanitizer $tool ($shape): exit $? ($(grep -c 'check: .*PASS' "$OUT/hopper-sanitize-$tool.log") checks passed; $(grep -m1 'SUMMARY' "$OUT/hopper-sanitize-$tool.log"))"
        done
      done ;;
    ch3)
      # Tensor cores, chapter 3: every 16-bit step beside cuBLAS of the same type, one process per
      # shape and type; CH3_SHAPES and CH3 narrow it.
      for mnk in ${CH3_SHAPES:-2048x2048x2048 4096x4096x4096 6144x6144x6144 8192x8192x8192 8192x8192x1024 8192x256x8192 1024x1024x8192}; do
        set -- ${mnk//x/ }
        for dtype in ${CH3_DTYPES:-bf16 f16}; do
          $host --variant ${CH3:-auto,wgmma-16bit,wgmma-cluster,wgmma-tma-store:1,wgmma-tma-store:2,wgmma-pingpong:1,wgmma-pingpong:2} --dtype $dtype --compare cublas --m $1 --n $2 --k $3 2>&1 | tee "$OUT/ch3-$dtype-$1x$2x$3.log" | grep '^|'
        done
      done ;;
    ch3-tf32)
      # TF32 on the skeleton, beside cuBLAS TF32 and SGEMM.
      for mnk in ${CH3_TF32_SHAPES:-4096x4096x4096 8192x8192x8192 8192x256x8192}; do
        set -- ${mnk//x/ }
        $host --variant ${CH3_TF32:-wgmma-tf32,wgmma-tf32:4,wgmma-3xtf32} --compare cublas-tf32,cublas --m $1 --n $2 --k $3 2>&1 | tee "$OUT/ch3-tf32-$1x$2x$3.log" | grep '^|'
      done ;;
    ch3-ncu)
      # The 16-bit kernels' counters beside cuBLAS's at 4096³ bf16 (one launch each).
      m=sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum,dram__bytes.sum,lts__t_sector_hit_rate.pct,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,launch__registers_per_thread,launch__grid_size,launch__cluster_dim_x,launch__shared_mem_per_block_dynamic,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum
      for v in ${CH3_NCU:-wgmma-16bit wgmma-cluster wgmma-tma-store:1 wgmma-pingpong:1 cublas}; do
        log="$OUT/ncu-ch3-${v//:/-}.log"
        ncu --clock-control none --launch-count 1 --metrics $m $host --variant $v --dtype ${NCU_DTYPE:-bf16} --size ${NCU_SIZE:-4096} --iters 1 --warmup 0 --no-check > "$log" 2>&1
        echo "ncu $v: exit $?"; grep -E "^    [a-z0-9_]+__[a-z].* [0-9]|^  (sm80|sm90|gemm_|nvjet)" "$log" | sed 's/  */ /g' | head -30
      done ;;
    ch3-sanitize)
      # Every Hopper kernel on the skeleton at shapes that cross every tile edge (m, n, k; lda,
      # ldb multiples of 8 in 16 bits, of 4 in f32), beta != 0; split-k where k has 8 slices.
      v=wgmma-16bit,wgmma-cluster,wgmma-tma-store:1,wgmma-tma-store:2,wgmma-tma-store:3,wgmma-pingpong:1,wgmma-pingpong:2
      for tool in memcheck racecheck synccheck; do
        i=0
        for run in "$v --m 264 --n 200 --k 72 --ldc 272" "$v --m 520 --n 300 --k 100 --lda 528 --ldb 104 --ldc 520" \
                   "wgmma-split-k:2,wgmma-split-k:4,wgmma-split-k:8 --m 264 --n 200 --k 584 --ldc 272"; do
          i=$((i + 1))
          for dtype in bf16 f16; do
            log="$OUT/ch3-sanitize-$tool-$dtype-$i.log"
            compute-sanitizer --tool $tool --error-exitcode 9 $host --variant $run --dtype $dtype --beta 0.5 --iters 1 --warmup 0 > "$log" 2>&1
            echo "compute-sanitizer $tool $dtype (--variant $run): exit $? ($(grep -c 'check: .*PASS' "$log") checks passed; $(grep -m1 'SUMMARY' "$log"))"
          done
        done
        log="$OUT/ch3-sanitize-$tool-tf32.log"
        compute-sanitizer --tool $tool --error-exitcode 9 $host --variant wgmma-tf32:1,wgmma-tf32:3,wgmma-tf32:4,wgmma-tf32:5,wgmma-tf32:6,wgmma-3xtf32:1,wgmma-3xtf32:2 --m 300 --n 260 --k 76 --lda 304 --ldc 301 --beta 0.5 --iters 1 --warmup 0 > "$log" 2>&1
        echo "compute-sanitizer $tool tf32: exit $? ($(grep -c 'check: .*PASS' "$log") checks passed; $(grep -m1 'SUMMARY' "$log"))"
      done ;;
    ladder)
      # Experiment 005: every step of the Hopper chapters beside cuBLAS of the same type, at
      # chapter 3's seven shapes (LADDERS narrows it: bf16,f16,tf32,3xtf32).
      start=$SECONDS
      $host experiment hopper ${LADDERS:+--ladders $LADDERS} ${LADDER_SHAPES:+--shapes $LADDER_SHAPES} --out "$OUT/results/005-hopper" 2>&1 | tee "$OUT/ladder.log" | grep -v '^  '
      echo "ladder: $((SECONDS - start)) s, exit ${PIPESTATUS[0]}" ;;
    auto16)
      # auto's 16-bit rows: every 16-bit candidate at auto's seven shapes.
      start=$SECONDS
      $host experiment auto --dtype bf16,f16 --out "$OUT/results/auto-16bit" 2>&1 | tee "$OUT/auto16.log" | grep -v '^  '
      echo "auto16: $((SECONDS - start)) s, exit ${PIPESTATUS[0]}" ;;
    auto-math)
      # auto's rows for the relaxed contracts (f32): 3xTF32 and TF32 against strict's choice.
      start=$SECONDS
      $host experiment auto --dtype f32 --math fp32-accurate,tf32 --out "$OUT/results/auto-math" 2>&1 | tee "$OUT/auto-math.log" | grep -v '^  '
      echo "auto-math: $((SECONDS - start)) s, exit ${PIPESTATUS[0]}" ;;
    library)
      # The library from a program (examples/quickstart.rs), then the CLI's contracts beside
      # cuBLAS SGEMM in one process: FP32-accurate at the bar's squares, strict at auto's shapes.
      "$bundle/quickstart" 2>&1 | tee "$OUT/quickstart.log"
      for s in 4096 8192; do
        $host --variant auto --math fp32-accurate --size $s --compare cublas --seed 1 2>&1 | tee -a "$OUT/library-fp32-accurate.log" | grep -E '^\||check'
      done
      for mnk in 1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 8192x8192x1024 1024x1024x8192 8192x256x8192; do
        IFS=x read -r m n k <<< "$mnk"
        $host --variant auto --math strict --m $m --n $n --k $k --compare cublas --seed 1 2>&1 | tee -a "$OUT/library-strict.log" | grep -E '^\| auto'
      done ;;
    fp8)
      # Tensor cores, chapter 4: the FP8 GPU tests (both kernels and cuBLASLt against the
      # reference; the accumulation probe, GPU against emulator), then every FP8 kernel beside
      # cuBLASLt (default: promoted sums; and fast accumulation) in one process per shape.
      "$bundle/tests-gpu" fp8 --nocapture 2>&1 | tee "$OUT/fp8-tests.log" | grep -E 'model|differ|relative error|test result|panicked' | grep -v ': [1-9][0-9]* of' | head -80
      for mnk in ${FP8_SHAPES:-2048x2048x2048 4096x4096x4096 6144x6144x6144 8192x8192x8192 8192x8192x1024}; do
        IFS=x read -r m n k <<< "$mnk"
        $host --variant wgmma-fp8:1,wgmma-fp8:2,wgmma-fp8:5,wgmma-fp8-block:6,wgmma-fp8-block:7,auto --dtype e4m3 --transa t --m $m --n $n --k $k --compare cublas,cublas-fast-accum --seed 1 2>&1 | tee -a "$OUT/fp8-speed.log" | grep -E '^\|'
      done
      for mnk in ${FP8_BLOCK_SHAPES:-4096x4096x4096 8192x8192x8192}; do
        IFS=x read -r m n k <<< "$mnk"
        $host --variant ${FP8_BLOCK_VARIANTS:-wgmma-fp8-block:1,wgmma-fp8-block:2,wgmma-fp8-block:3,wgmma-fp8-block:4,wgmma-fp8-block:5,wgmma-fp8-block:6,wgmma-fp8-block:7} --dtype e4m3 --transa t --scaling block --m $m --n $n --k $k --compare cublas --seed 1 2>&1 | tee -a "$OUT/fp8-block-speed.log" | grep -E '^\|'
      done ;;
    fp8-dense)
      # Block-scaled e4m3 on DeepGEMM's dense set (D[M×N] = X[M×K]·W[N×K]ᵀ: m = N, n = M tokens,
      # k = K, TN), beside cuBLASLt's block-scaled matmul: auto, the 128 × 128 kernel and, at
      # decode sizes, the narrow one with a tile as wide as the tokens and the swapped one.
      for tokens in ${FP8_DENSE_TOKENS:-64 128 4096}; do
        for nk in "2112 7168" "24576 1536" "32768 512" "7168 16384" "4096 7168" "7168 2048"; do
          set -- $nk
          if [ "$tokens" -le 128 ]; then vs=auto,wgmma-fp8-block:6,wgmma-fp8-block-narrow:$tokens,wgmma-fp8-block-swap:$([ "$tokens" -le 64 ] && echo 132 || echo 32); else vs=auto,wgmma-fp8-block:6,wgmma-fp8-block:7; fi
          echo "== M=$tokens N=$1 K=$2"
          $host --variant ${FP8_DENSE_VARIANTS:-$vs} --dtype e4m3 --transa t --scaling block --m $1 --n $tokens --k $2 --compare cublas --seed 1 2>&1 | tee -a "$OUT/fp8-dense-full.log" | grep -E '^\| [a-z]|^(E|e)rror' | grep -v '^| variant'
        done
      done | tee "$OUT/fp8-dense.log" ;;
    fp8-precision)
      # Relative error against the f64 reference of the dequantised operands, k = 1024 … 16384,
      # random and outlier inputs, per tensor and per block, beside cuBLASLt's.
      for k in 1024 4096 16384; do
        for outliers in "" "--outliers"; do
          $host --variant wgmma-fp8:2 --dtype e4m3 --transa t --m 2048 --n 2048 --k $k --compare cublas,cublas-fast-accum $outliers --seed 1 --iters 1 --warmup 0 2>&1 | tee -a "$OUT/fp8-precision.log" | grep -E '^\|'
          $host --variant wgmma-fp8-block:6 --dtype e4m3 --transa t --scaling block --m 2048 --n 2048 --k $k --compare cublas $outliers --seed 1 --iters 1 --warmup 0 2>&1 | tee -a "$OUT/fp8-precision.log" | grep -E '^\|'
        done
      done ;;
    fp8-sanitize)
      # n = 1100 is 9 tiles of 128: the last cluster of two along n has a block past C's edge.
      for tool in memcheck racecheck synccheck; do
        for scaling in tensor block; do
          compute-sanitizer --tool $tool --error-exitcode 9 $host --variant wgmma-fp8-block:1,wgmma-fp8-block:2,wgmma-fp8-block:3,wgmma-fp8-block:4,wgmma-fp8-block:5,wgmma-fp8-block:6,wgmma-fp8-block:7$([ $scaling = tensor ] && echo ,wgmma-fp8:1,wgmma-fp8:2,wgmma-fp8:5) --dtype e4m3 --transa t --scaling $scaling --m 1000 --n 1100 --k 1000 --lda 1008 --ldb 1024 --ldc 1008 --beta 0.5 --iters 1 --warmup 0 > "$OUT/fp8-sanitize-$tool-$scaling.log" 2>&1
          echo "compute-sanitizer $tool $scaling: exit $? ($(grep -c 'pass' "$OUT/fp8-sanitize-$tool-$scaling.log") passes; $(grep -m1 'SUMMARY' "$OUT/fp8-sanitize-$tool-$scaling.log"))"
        done
      done ;;
    shapes-check)
      # Chapter 5's kernels against the f64 reference at shapes that cross every tile edge, in
      # every layout they compute, bf16 and f16, beta 0.5 (C read), padded leading dimensions.
      for dtype in bf16 f16; do
        for ops in "n n" "t n" "n t" "t t"; do
          set -- $ops
          $host --variant wgmma-layouts:1,wgmma-layouts:2 --dtype $dtype --transa $1 --transb $2 --m 1000 --n 1100 --k 1000 --lda 1008 --ldb 1112 --ldc 1008 --beta 0.5 --iters 1 --warmup 0 2>&1 | tee -a "$OUT/shapes-check.log" | grep -E '^\| |FAIL|error' | tail -3
        done
        for ta in n t; do
          for shape in "--m 2112 --n 1 --k 7168" "--m 1000 --n 37 --k 4000 --ldc 1001" "--m 333 --n 130 --k 520" "--m 7168 --n 64 --k 2048 --beta 0.5"; do
            $host --variant wgmma-narrow:8,wgmma-narrow:16,wgmma-narrow:32,wgmma-narrow:64,wgmma-narrow:128 --dtype $dtype --transa $ta $shape --iters 2 --warmup 1 2>&1 | tee -a "$OUT/shapes-check.log" | grep -E 'FAIL|error' | head -3
          done
        done
      done
      echo "shapes-check: $(grep -c 'PASS' "$OUT/shapes-check.log") checks passed, $(grep -c 'FAIL' "$OUT/shapes-check.log") failed, $(grep -ci 'error' "$OUT/shapes-check.log") errors" ;;
    shapes-sanitize)
      # compute-sanitizer on chapter 5's kernels at shapes crossing every tile edge (stream-k
      # tiles split between blocks included: 3 blocks per tile at n = 40, k = 1000).
      for tool in memcheck racecheck synccheck; do
        compute-sanitizer --tool $tool --error-exitcode 9 $host --variant wgmma-narrow:8,wgmma-narrow:64,wgmma-narrow:128 --dtype bf16 --transa t --m 1000 --n 40 --k 1000 --ldc 1001 --beta 0.5 --iters 1 --warmup 0 > "$OUT/shapes-sanitize-$tool.log" 2>&1; r1=$?
        compute-sanitizer --tool $tool --error-exitcode 9 $host --variant wgmma-layouts:1,wgmma-layouts:2 --dtype bf16 --transa t --transb t --m 1000 --n 1100 --k 200 --lda 208 --ldb 1112 --ldc 1008 --beta 0.5 --iters 1 --warmup 0 >> "$OUT/shapes-sanitize-$tool.log" 2>&1; r2=$?
        compute-sanitizer --tool $tool --error-exitcode 9 $host --variant wgmma-fp8-narrow:8,wgmma-fp8-narrow:64,wgmma-fp8-narrow:128 --dtype e4m3 --transa t --m 1000 --n 40 --k 1024 --ldc 1001 --beta 0.5 --iters 1 --warmup 0 >> "$OUT/shapes-sanitize-$tool.log" 2>&1; r3=$?
        compute-sanitizer --tool $tool --error-exitcode 9 $host --variant wgmma-fp8-block-narrow:8,wgmma-fp8-block-narrow:64,wgmma-fp8-block-narrow:128 --dtype e4m3 --transa t --scaling block --m 1000 --n 40 --k 1000 --lda 1008 --ldb 1008 --ldc 1001 --beta 0.5 --iters 1 --warmup 0 >> "$OUT/shapes-sanitize-$tool.log" 2>&1; r4=$?
        compute-sanitizer --tool $tool --error-exitcode 9 $host --variant wgmma-fp8-block-swap:16,wgmma-fp8-block-swap:56,wgmma-fp8-block-swap:132,wgmma-fp8-block-swap:216,wgmma-fp8-block-swap:332 --dtype e4m3 --transa t --scaling block --m 1000 --n 200 --k 1000 --lda 1008 --ldb 1008 --ldc 1001 --beta 0.5 --iters 1 --warmup 0 >> "$OUT/shapes-sanitize-$tool.log" 2>&1; r5=$?
        echo "compute-sanitizer $tool: exit $r1/$r2/$r3/$r4/$r5 ($(grep -c 'PASS\|: pass' "$OUT/shapes-sanitize-$tool.log") checks passed; $(grep -m1 'SUMMARY' "$OUT/shapes-sanitize-$tool.log"))"
      done ;;
    shapes-probe)
      # Every candidate of chapter 5 at the model shapes (D = X·Wᵀ: m = N, n = tokens, k = K,
      # TN), beside cuBLAS, one process per shape, speed only. PROBE_DTYPE (bf16), PROBE_M (the
      # token counts), PROBE_NK (the (N, K) pairs) narrow it.
      for nk in ${PROBE_NK:-2112x7168 24576x1536 32768x512 7168x16384 4096x7168 7168x2048 6144x4096 4096x4096 28672x4096 4096x14336 128256x4096 10240x8192 8192x8192 57344x8192 8192x28672}; do
        for tokens in ${PROBE_M:-1 16 64 128 2000 4096}; do
          set -- ${nk//x/ }
          if [ $tokens -le 16 ]; then v=wgmma-narrow:8,wgmma-narrow:16
          elif [ $tokens -le 64 ]; then v=wgmma-narrow:64,wgmma-layouts:2,wgmma-stream-k
          elif [ $tokens -le 128 ]; then v=wgmma-narrow:64,wgmma-narrow:128,wgmma-layouts:2,wgmma-stream-k
          else v=wgmma-layouts:1,wgmma-layouts:2,wgmma-stream-k; fi
          v=${PROBE_VARIANTS:-$v}
          $host --variant $v --compare cublas --dtype ${PROBE_DTYPE:-bf16} --transa t --m $1 --n $tokens --k $2 --iters ${PROBE_ITERS:-10} --warmup 2 --no-check 2>&1 | tee -a "$OUT/probe.log" | grep -E '^\| [a-z]' | sed "s/^/$1x${tokens}x$2 /"
        done
      done ;;
    shapes)
      # The shapes issue's suite (`host experiment shapes`) for each of SHAPES_DTYPES, speed only
      # (correctness: the step shapes-check and the tests); pages into $OUT/results/shapes-<dtype>.
      for dtype in ${SHAPES_DTYPES:-bf16 f16 e4m3 tf32}; do
        $host experiment shapes --dtype $dtype --no-check --out "$OUT/results/shapes-$dtype" ${SHAPES_ARGS:-} > "$OUT/shapes-$dtype.log" 2>&1
        echo "shapes $dtype: exit $?"; grep -A14 '^### Summary' "$OUT/shapes-$dtype.log" | grep '^|' | head -14
      done ;;
    random)
      # `host experiment shapes --random N` for each of RANDOM_DTYPES (RANDOM_COUNT shapes of
      # RANDOM_SEED, checked): pages into $OUT/results/random-<dtype>, the summary and the worst.
      for dtype in ${RANDOM_DTYPES:-bf16 f16}; do
        $host experiment shapes --dtype $dtype --random ${RANDOM_COUNT:-200} --seed ${RANDOM_SEED:-1} --out "$OUT/results/random-$dtype" ${RANDOM_ARGS:-} > "$OUT/random-$dtype.log" 2>&1
        echo "random $dtype: exit $?"; grep -E '^\*\*auto in' "$OUT/results/random-$dtype/README.md" | head -1
        grep -oE 'Its error on these [0-9]+ shapes.*at most [0-9.]+%' "$OUT/results/random-$dtype/README.md" | head -1
        grep -A9 '^## Per layout' "$OUT/results/random-$dtype/README.md" | grep '^|'
        grep -A13 '^## The 10 slowest' "$OUT/results/random-$dtype/README.md" | grep '^|'
      done ;;
    tma-layer-stride)
      # What the driver and the TMA engine make of a layer stride of 0 (a broadcast member) or
      # one smaller than a matrix: the emulator's rule comes from this table.
      src=$(dirname "$0")/probes/tma_layer_stride.cu; [ -f "$src" ] || src=xtask/scripts/probes/tma_layer_stride.cu
      nvcc -arch=sm_90a -std=c++17 -o "$OUT/tma_layer_stride" "$src" -lcuda 2>&1 | tail -5
      "$OUT/tma_layer_stride" 2>&1 | tee "$OUT/tma-layer-stride.log" ;;
    offgrid)
      # The table of sizes off the 128-grid that the suite never measured (bf16, checked).
      for spec in "n 3000 3000 3000" "n 5000 7000 3000" "t 5000 7000 3000" "n 6000 3000 5000" "t 6000 3000 5000" "n 5120 7168 3000" "t 5120 7168 3000" "n 1024 1024 8192" "t 1024 1024 8192" "n 11008 2000 4096" "t 2112 4096 7168"; do
        set -- $spec
        $host --variant auto --dtype ${OFFGRID_DTYPE:-bf16} --transa $1 --m $2 --n $3 --k $4 --compare cublas 2>&1 | tee -a "$OUT/offgrid.log" | grep -E '^\| [a-z]|rror|FAIL' | grep -v '^| variant' | sed "s/^/$1n $2x$3x$4 /"
      done ;;
    waves)
      # wgmma-waves (192 x 128 tiles): the four layouts checked and compute-sanitizer, then
      # beside the 256 x 128 ones and cuBLAS (bf16, no check) the off-grid table padded to 64
      # elements, the squares, and the grid auto's wave_tiles_pay was fitted on.
      up() { echo $(( ($1 + 63) / 64 * 64 )); }
      for t in "n n" "t n" "n t" "t t"; do
        set -- $t
        $host --variant wgmma-waves:1,wgmma-layouts:2 --dtype bf16 --transa $1 --transb $2 --m 1000 --n 600 --k 1000 --lda 1008 --ldb 1008 --ldc 1000 --beta 0.5 --seed 3 2>&1 | tee -a "$OUT/waves-check.log" | grep -E '^\| [a-z]|FAIL|rror' | grep -v '^| variant' | sed "s/^/$1$2 /"
      done
      timeout 100 compute-sanitizer --tool memcheck $host --variant wgmma-waves:1 --dtype f16 --transa t --transb t --m 400 --n 300 --k 200 --ldc 408 --beta 0.5 --iters 1 --warmup 0 2>&1 | tee "$OUT/waves-sanitize.log" | grep -E "ERROR SUMMARY"
      shapes="n 3000 3000 3000|n 6000 3000 5000|t 6000 3000 5000|t 2112 4096 7168|n 1536 1536 4096|t 1536 1536 4096|n 4096 4096 4096|n 8192 8192 8192"
      for m in 1536 2112 3000 4096 5000 6144; do for n in 2000 3000 4096 7168; do for a in n t; do shapes="$shapes|$a $m $n 4096"; done; done; done
      echo "$shapes" | tr '|' '\n' | while read a m n k; do
        ra=$m; [ $a = t ] && ra=$k
        $host --variant auto,wgmma-layouts:1,wgmma-layouts:2,wgmma-waves:1 --dtype bf16 --transa $a --m $m --n $n --k $k --lda $(up $ra) --ldb $(up $k) --ldc $(up $m) --compare cublas --no-check --iters 20 2>&1 | tee -a "$OUT/waves.log" | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | sed "s/^/$a $m $n $k /"
      done ;;
    cluster4)
      # wgmma-layouts:4 (clusters of four along n sharing A) beside :1 (clusters of two), :2
      # (none), wgmma-waves and cuBLAS (bf16, no check) on the off-grid table with its leading
      # dimensions as given (off the 128-byte line) and padded to 64 elements, and on aligned
      # squares. Its checks are the step cluster4-check.
      up() { echo $(( ($1 + 63) / 64 * 64 )); }
      for spec in ${CLUSTER4_SHAPES:-"n 3000 3000 3000" "n 5000 7000 3000" "t 5000 7000 3000" "n 6000 3000 5000" "t 6000 3000 5000" "n 5120 7168 3000" "t 5120 7168 3000" "n 11008 2000 4096" "t 2112 4096 7168" "t 4096 4096 4096" "n 8192 8192 8192"}; do
        set -- $spec
        ra=$2; [ $1 = t ] && ra=$4
        for lds in "" "--lda $(up $ra) --ldb $(up $4) --ldc $(up $2)"; do
          $host --variant ${CLUSTER4_CANDIDATES:-wgmma-layouts:4,wgmma-layouts:1,wgmma-layouts:2,wgmma-waves:1} --dtype bf16 --transa $1 --m $2 --n $3 --k $4 $lds --compare cublas --no-check --iters 20 2>&1 | tee -a "$OUT/cluster4.log" | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | sed "s/^/$1n $2x$3x$4 ${lds:+pad} /"
        done
      done ;;
    cluster4-check)
      # wgmma-layouts:4 checked in the four layouts (crossing every tile edge, a cluster's last
      # blocks past n) and compute-sanitizer.
      for t in "n n" "t n" "n t" "t t"; do
        set -- $t
        $host --variant wgmma-layouts:4,wgmma-layouts:1 --dtype bf16 --transa $1 --transb $2 --m 1000 --n 1100 --k 1000 --lda 1016 --ldb 1104 --ldc 1000 --beta 0.5 --seed 3 2>&1 | tee -a "$OUT/cluster4-check.log" | grep -E '^\| [a-z]|FAIL|rror' | grep -v '^| variant' | sed "s/^/$1$2 /"
      done
      timeout 100 compute-sanitizer --tool memcheck $host --variant wgmma-layouts:4 --dtype f16 --transa t --transb t --m 400 --n 700 --k 200 --ldb 704 --ldc 408 --beta 0.5 --iters 1 --warmup 0 2>&1 | tee "$OUT/cluster4-sanitize.log" | grep -E "ERROR SUMMARY" ;;
    tile-model)
      # auto's tile model (auto::wide_plan) end to end against the kernels it weighed (bf16, no
      # check): the off-grid shapes off the 128-byte line, auto (its copies included) beside
      # clusters of four and of two reading both operands as they lie.
      for spec in ${MODEL_SHAPES:-"n 5000 7000 3000" "t 5000 7000 3000" "t 5120 7168 3000" "n 5120 7168 3000" "n 3000 3000 3000"}; do
        set -- $spec
        $host --variant auto,wgmma-layouts:4,wgmma-layouts:1 --dtype bf16 --transa $1 --m $2 --n $3 --k $4 --compare cublas --no-check --iters 20 2>&1 | tee -a "$OUT/tile-model.log" | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | sed "s/^/$1n $2x$3x$4 /"
      done ;;
    offgrid-pad)
      # What an aligned but off-the-grid leading dimension costs (bf16, no check): each shape of
      # the off-grid table with its leading dimensions as they are, then padded up to 64 elements
      # (128 bytes, one TMA box row per L2 line), each beside cuBLAS, auto's candidates beside it.
      for spec in ${PAD_SHAPES:-"n 3000 3000 3000" "n 5000 7000 3000" "t 5000 7000 3000" "n 6000 3000 5000" "t 6000 3000 5000" "n 5120 7168 3000" "t 5120 7168 3000" "n 1024 1024 8192" "t 1024 1024 8192" "n 11008 2000 4096" "t 2112 4096 7168"}; do
        set -- $spec
        ra=$2; [ $1 = t ] && ra=$4
        up() { echo $(( ($1 + 63) / 64 * 64 )); }
        if [ $1 = n ]; then cand=${PAD_N:-auto,wgmma-tma-store:5,wgmma-tma-store:4,wgmma-layouts:1,wgmma-layouts:2,wgmma-stream-k,wgmma-pingpong,wgmma-queue:3,wgmma-split-k:2,wgmma-split-k:4}
        else cand=${PAD_T:-auto,wgmma-layouts:1,wgmma-layouts:2,wgmma-layouts:3,wgmma-stream-k,wgmma-queue:3,wgmma-narrow:128}; fi
        for lds in "" "--lda $(up $ra) --ldb $(up $4) --ldc $(up $2)"; do
          $host --variant $cand --dtype bf16 --transa $1 --m $2 --n $3 --k $4 $lds --compare cublas --no-check --iters 20 2>&1 | tee -a "$OUT/offgrid-pad.log" | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | sed "s/^/$1n $2x$3x$4 ${lds:+pad} /"
        done
      done ;;
    fewtiles)
      # Fewer 256 x 128 tiles than half a wave (bf16, no check): the wide tiles beside the
      # stream-k kernels and the split of k, N,N and T,N, on a grid of m = n and k.
      # N,T and T,T (FEWTILES_LAYOUTS="nt tt"): auto (B copied transposed) beside the wide tiles.
      for t in ${FEWTILES_LAYOUTS:-nn tn}; do for mn in ${FEWTILES_SIZES:-512 1024 1536}; do for k in 1024 4096 8192; do
        case $t in
          nn) cand=auto,wgmma-tma-store:5,wgmma-narrow:128,wgmma-narrow:64,wgmma-stream-k,wgmma-split-k:4,wgmma-pingpong ;;
          tn) cand=auto,wgmma-layouts:1,wgmma-narrow:128,wgmma-narrow:64,wgmma-stream-k ;;
          *) cand=auto,wgmma-layouts:1,wgmma-stream-k ;;
        esac
        $host --variant $cand --dtype bf16 --transa ${t:0:1} --transb ${t:1:1} --m $mn --n $mn --k $k --compare cublas --no-check --iters 20 2>&1 | tee -a "$OUT/fewtiles.log" | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | sed "s/^/$t ${mn}x${mn}x$k /"
      done; done; done ;;
    nt-worst)
      # The random shapes' lowest, all N,T with B copied transposed (dtype m n k lda ldb ldc),
      # and N,T with few tiles: auto beside cuBLAS, checked.
      for spec in ${NT_SHAPES:-"bf16 330 15120 569 330 15120 330" "f16 326 9729 1483 326 9730 326" "f16 1300 512 12283 1302 512 1300" "bf16 1022 2425 265 1022 2429 1022" "bf16 4317 415 314 4322 415 4317" "f16 443 3834 270 445 3834 443" "bf16 1024 1024 8192 1024 1024 1024" "bf16 512 512 8192 512 512 512"}; do
        set -- $spec
        $host --variant auto --dtype $1 --transb t --m $2 --n $3 --k $4 --lda $5 --ldb $6 --ldc $7 --compare cublas 2>&1 | tee -a "$OUT/nt-worst.log" | grep -E '^\| [a-z]|rror|FAIL' | grep -v '^| variant' | sed "s/^/nt $1 $2x$3x$4 /"
      done ;;
    decode)
      # A decode step as a graph (issue 64): 32 layers of Llama-3 8B's GEMMs at 1, 16, 64, 128
      # tokens, auto with and without the early start beside cuBLAS, each chain checked.
      $host experiment decode --dtype ${DECODE_DTYPE:-bf16} --out "$OUT/decode-${DECODE_DTYPE:-bf16}" 2>&1 | tee -a "$OUT/decode.log" | grep -E '^\| [0-9]|tokens:|rror|FAIL' ;;
    decode-timeline)
      # The chains on the kernels' clock (CUPTI): a layer's µs in kernels, between them and two
      # at once, and the middle layer's kernels, each chain with and without the early start.
      export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
      $host experiment decode --dtype ${DECODE_DTYPE:-bf16} --tokens ${DECODE_TOKENS:-1,64,128} --model ${DECODE_MODEL:-llama3,moe} --launches 5 --timeline --out "$OUT/decode-timeline" 2>&1 | tee -a "$OUT/decode-timeline.log" | grep -E '^\| [0-9]|tokens:|rror|FAIL' ;;
    decode-sanitize)
      # compute-sanitizer over the early-started chain at 16 tokens, 2 layers.
      compute-sanitizer --tool memcheck $host experiment decode --tokens 16 --layers 1 --launches 1 --out "$OUT/decode-sanitize" 2>&1 | tee -a "$OUT/decode-sanitize.log" | grep -E "ERROR SUMMARY|tokens:" ;;
    moe-decode)
      # DeepSeek-V3's experts at decode (issue 64): the grouped GPU test (every kernel that
      # runs groups, the swapped tiles among them), compute-sanitizer over those tiles, the
      # tiles beside wgmma-layouts:2 and cuBLAS's call per expert at 8 experts of 1 token, 100
      # of 1-2 and 233 of 4-8, then decode's MoE chain at 1 and 16 tokens (64 and 128: the
      # step decode).
      "$bundle/tests-gpu" grouped_gemms_match --nocapture 2>&1 | tee "$OUT/moe-test.log" | grep -E 'test result|panicked' -A2
      timeout 120 compute-sanitizer --tool memcheck $host --variant wgmma-swap:432,wgmma-swap:464,wgmma-swap:532,wgmma-swap:564 --dtype bf16 --transa t --m 520 --k 1000 --groups 6 --group-m 40 --masked --seed 1 --iters 1 --warmup 0 2>&1 | tee "$OUT/moe-sanitize.log" | grep -E 'ERROR SUMMARY|^\| [a-z]' | grep -v '^| variant'
      for nk in "4096 7168" "7168 2048"; do
        for gm in "8 1" "100 2" "233 8"; do
          set -- $nk $gm
          echo "== m=$1 k=$2 groups=$3 group-m=$4 masked"
          $host --variant wgmma-layouts:2,wgmma-swap:464,wgmma-swap:564,auto --compare cublas --dtype bf16 --transa t --m $1 --k $2 --groups $3 --group-m $4 --masked --no-check --seed 1 2>&1 | tee -a "$OUT/moe-tiles.log" | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
        done
      done
      $host experiment decode --model moe --tokens 1,16 --out "$OUT/decode-moe" 2>&1 | tee "$OUT/decode-moe.log" | grep -E '^\| [0-9]|rror|FAIL' ;;
    tf32-tn)
      # TF32 in the models' layout (issue 65): every tile of wgmma-tf32-swap checked at a shape
      # that crosses every edge (m, n, k; odd ldc; beta), compute-sanitizer over four of them,
      # then auto --math tf32 over suites 1 + 2 in T,N beside cuBLAS TF32 and the squares in
      # T,N and N,N. The page: $OUT/results/006-shapes-tf32.
      tiles=$(for t in 132 116 148 156 164 32 48 64 248 264 332 348 356 364 1128 1256; do printf "wgmma-tf32-swap:$t,"; done)
      $host --variant ${tiles%,},auto --math tf32 --dtype f32 --transa t --m 1000 --n 150 --k 1000 --lda 1004 --ldc 1001 --beta 0.5 --seed 3 2>&1 | tee "$OUT/tf32-tn-check.log" | grep -E '^\| [a-z]|FAIL|rror' | grep -v '^| variant'
      timeout 120 compute-sanitizer --tool memcheck $host --variant wgmma-tf32-swap:132,wgmma-tf32-swap:1256,wgmma-tf32-swap:248,wgmma-tf32-swap:332 --dtype f32 --transa t --m 520 --n 150 --k 1000 --ldc 521 --beta 0.5 --seed 1 --iters 1 --warmup 0 2>&1 | tee "$OUT/tf32-tn-sanitize.log" | grep -E 'ERROR SUMMARY'
      $host experiment shapes --dtype tf32 --suite 1,2 --layout tn --no-check --out "$OUT/results/006-shapes-tf32" 2>&1 | tee "$OUT/tf32-tn-suite.log" | grep -E 'geomean|below'
      for size in 4096 8192; do
        for t in t n; do
          $host --variant auto --math tf32 --dtype f32 --transa $t --size $size --compare cublas-tf32 --no-check --seed 1 2>&1 | grep -E '^\| [a-z]|rror' | grep -v '^| variant'
        done
      done | tee "$OUT/tf32-tn-squares.log" ;;
    copies-probe)
      # What auto's operand copies cost (bf16): each shape with tight (unaligned) leading
      # dimensions, where auto copies A and B first, beside the same shape with A's and B's
      # rounded up to 8 elements (no copy), and the kernel alone on the aligned operands.
      for spec in ${COPIES_SHAPES:-"t n 3630 286 8260" "n t 298 301 2831" "n n 477 5827 341" "n n 454 433 8559" "n t 2148 3607 298" "t n 12184 1282 7098" "n n 6633 7888 2445"}; do
        set -- $spec
        ra=$3; [ $1 = t ] && ra=$5; rb=$5; [ $2 = t ] && rb=$4
        up() { echo $(( ($1 + 7) / 8 * 8 )); }
        base="--dtype bf16 --transa $1 --transb $2 --m $3 --n $4 --k $5 --no-check --iters 20"
        for lds in "" "--lda $(up $ra) --ldb $(up $rb)"; do
          $host --variant auto $base $lds --compare cublas 2>&1 | tee -a "$OUT/copies-probe.log" | grep -E '^\| [a-z]|rror' | grep -v '^| variant' | sed "s/^/$1$2 $3x$4x$5 ${lds:-tight} /"
        done
      done ;;
    layouts16)
      # The 16-bit N,T and T,T at an m that no kernel stores (B copied transposed), checked.
      for dtype in bf16 f16; do for t in "--transb t" "--transa t --transb t"; do
        $host --variant auto --dtype $dtype $t --m 4093 --n 4096 --k 4096 --compare cublas 2>&1 | tee -a "$OUT/layouts16.log" | grep -E '^\| [a-z]|rror|FAIL' | grep -v '^| variant' | sed "s/^/$dtype $t /"
      done; done ;;
    squares-probe)
      # The squares of suite 3 (N,N): chapter 3's best beside chapter 5's, and cuBLAS.
      for mnk in "1024 1024 1024" "2048 2048 2048" "4096 4096 4096" "8192 8192 8192" "8192 8192 1024" "1024 1024 8192" "8192 256 8192"; do
        set -- $mnk
        $host --variant ${SQUARES:-auto,wgmma-tma-store:5,wgmma-layouts:1,wgmma-stream-k,wgmma-narrow:128} --compare cublas --dtype ${PROBE_DTYPE:-bf16} --m $1 --n $2 --k $3 --iters ${PROBE_ITERS:-10} --warmup 2 --no-check 2>&1 | tee -a "$OUT/squares.log" | grep -E '^\| [a-z]' | sed "s/^/$1x$2x$3 /"
      done ;;
    fp8-ncu)
      # One launch each at 8192³ (clocks not locked): each kernel beside cuBLASLt's, per tensor
      # and per block.
      for run in ${FP8_NCU_RUNS:-wgmma-fp8:5@tensor cublas@tensor wgmma-fp8-block:6@block cublas@block}; do
        v=${run%@*} scaling=${run#*@}
        ncu --clock-control none --launch-count 1 --section SpeedOfLight --section Occupancy \
            --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
            --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis \
            $host --variant $v --dtype e4m3 --transa t --scaling $scaling --size 8192 --iters 1 --warmup 0 --no-check > "$OUT/fp8-ncu-${v/:/-}-$scaling.log" 2>&1
        echo "ncu $v $scaling: exit $?"
      done ;;
    ncu)
      # Hardware counters of one launch each (clocks not locked: as the timings run).
      for v in ${NCU_VARIANTS:-gemm128 best cublas}; do
        ncu --clock-control none --launch-count 1 --section SpeedOfLight --section Occupancy \
            --section LaunchStats --section WarpStateStats --section SchedulerStats \
            --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis \
            --metrics smsp__cycles_elapsed.avg.per_second,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active \
            $host --variant $v --size ${NCU_SIZE:-4096} --iters 1 --warmup 0 --no-check > "$OUT/ncu-$v.log" 2>&1
        echo "ncu $v: exit $?"
      done ;;
    experiments)
      # The five experiments at the documents' sizes: a results page, CSVs, JSON and SVG charts
      # each in $OUT/results/<experiment>/, the tables printed here. Each picks its own timing
      # (000: ≤5 runs; 003: one run per configuration, as the report); 003's CPU runs are
      # skipped when estimated over 8 s. Estimated 4–5 minutes on an H100 with 16 cores (not yet timed).
      start=$SECONDS
      $host experiment all --out "$OUT/results" --cpu-time-limit 8 2>&1 | tee "$OUT/experiments.log" | grep -v '^  '
      echo "experiments: $((SECONDS - start)) s, exit ${PIPESTATUS[0]}" ;;
    sanitize)
      # Every GPU kernel (cuBLAS and the CPU variants are not ours to check), every tile of best.
      all=$($host --list | awk '{print $1}' | grep -v -e '^cublas$' -e '^cpu-' | paste -sd, -),best:2,best:3,best:4
      for tool in memcheck racecheck synccheck; do
        compute-sanitizer --tool $tool --error-exitcode 9 $host --variant "$all" --m 100 --n 67 --k 45 --lda 103 --ldc 101 --beta 0.5 --iters 1 --warmup 0 --both-dtypes > "$OUT/sanitize-$tool.log" 2>&1
        echo "compute-sanitizer $tool: exit $? ($(grep -c 'check: .*PASS' "$OUT/sanitize-$tool.log") checks passed; $(grep -m1 'SUMMARY' "$OUT/sanitize-$tool.log"))"
        # The 16-byte-load kernels need m, k, lda, ldb multiples of 4: a ragged shape they accept.
        compute-sanitizer --tool $tool --error-exitcode 9 $host --variant v5,gemm64,gemm128,fynv,best:1,best:2,best:3,best:4 --m 100 --n 67 --k 44 --lda 104 --ldc 101 --beta 0.5 --iters 1 --warmup 0 --both-dtypes > "$OUT/sanitize-$tool-vec4.log" 2>&1
        echo "compute-sanitizer $tool (16-byte-load kernels): exit $? ($(grep -c 'check: .*PASS' "$OUT/sanitize-$tool-vec4.log") checks passed; $(grep -m1 'SUMMARY' "$OUT/sanitize-$tool-vec4.log"))"
      done ;;
    dev-vs-release)
      # `cargo run -p host -- --variant v5` in the dev profile against the release one
      # (needs `cargo xtask gpu-bundle --dev-host`); the bar is dev within 1.5x of release.
      for bin in host-dev host; do
        TIMEFORMAT="$bin --variant v5: %R s wall"
        time { "$bundle/$bin" --variant v5 --seed 1 > "$OUT/dev-vs-release-$bin.log" 2>&1; echo "exit $?"; }
      done ;;
    *) $host $step 2>&1 | tee -a "$OUT/misc.log" ;;
  esac
done
