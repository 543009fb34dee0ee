"""PyTorch's tensor-parallel layer on the same GPUs: the yardstick of `host --parallel allgather`
(and reducescatter).

For each shape (the issue's bar): NCCL then cuBLAS in sequence (all_gather_into_tensor then
matmul; matmul then reduce_scatter_tensor), and PyTorch's fused async-TP ops on symmetric
memory (fused_all_gather_matmul, fused_matmul_reduce_scatter), bf16, one process per GPU.
Each time is the slowest rank's median of CUDA-event timings (3 warm-ups, 20 runs, a barrier
before each). NVLink multicast stays off. Prints one JSON line per shape and form.

    python3 tp_torch.py [GPUS]
"""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SHAPES = [
    ("allgather", 8192, 28672, 8192),
    ("allgather", 8192, 10240, 8192),
    ("allgather", 2048, 28672, 8192),
    ("allgather", 2048, 10240, 8192),
    ("reducescatter", 8192, 8192, 28672),
    ("reducescatter", 8192, 8192, 8192),
    ("reducescatter", 2048, 8192, 28672),
    ("reducescatter", 2048, 8192, 8192),
]


def timed(fn, warmup=3, iters=20):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        dist.barrier()
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    median = torch.tensor([times[len(times) // 2]], device="cuda")
    dist.all_reduce(median, op=dist.ReduceOp.MAX)
    return median.item()


def worker(rank, world, port):
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        NCCL_NVLS_ENABLE="0",
        TORCH_SYMM_MEM_DISABLE_MULTICAST="1",
    )
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    group = dist.group.WORLD.group_name
    fused_ok = None
    try:
        from torch.distributed._symmetric_memory import enable_symm_mem_for_group

        enable_symm_mem_for_group(group)
        fused_ok = True
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        fused_ok = f"{type(e).__name__}: {e}"
    bf16 = torch.bfloat16
    for form, t, n, k in SHAPES:
        row = {"form": form, "T": t, "N": n, "K": k, "gpus": world}
        if form == "allgather":
            x = torch.randn(t // world, k, device="cuda", dtype=bf16)
            w = torch.randn(n // world, k, device="cuda", dtype=bf16)
            gathered = torch.empty(t, k, device="cuda", dtype=bf16)

            def sequence():
                dist.all_gather_into_tensor(gathered, x)
                return gathered @ w.t()

            def comm():
                dist.all_gather_into_tensor(gathered, x)

            def gemm():
                return gathered @ w.t()

            def fused():
                return torch.ops.symm_mem.fused_all_gather_matmul(x, [w.t()], gather_dim=0, group_name=group)
        else:
            x = torch.randn(t, k // world, device="cuda", dtype=bf16)
            w = torch.randn(n, k // world, device="cuda", dtype=bf16)
            partial = x @ w.t()
            out = torch.empty(t // world, n, device="cuda", dtype=bf16)

            def sequence():
                y = x @ w.t()
                dist.reduce_scatter_tensor(out, y)
                return out

            def comm():
                dist.reduce_scatter_tensor(out, partial)

            def gemm():
                return x @ w.t()

            def fused():
                return torch.ops.symm_mem.fused_matmul_reduce_scatter(x, w.t(), "sum", scatter_dim=0, group_name=group)

        row["sequence_ms"] = timed(sequence)
        row["comm_ms"] = timed(comm)
        row["gemm_ms"] = timed(gemm)
        if fused_ok is True:
            try:
                row["fused_ms"] = timed(fused)
            except Exception as e:  # noqa: BLE001
                row["fused_error"] = f"{type(e).__name__}: {str(e)[:200]}"
        else:
            row["fused_error"] = fused_ok
        # One GPU, the whole layer: X (T×K) · W (N×K)ᵀ.
        if rank == 0:
            xw = torch.randn(t, k, device="cuda", dtype=bf16)
            ww = torch.randn(n, k, device="cuda", dtype=bf16)
            for _ in range(3):
                xw @ ww.t()
            torch.cuda.synchronize()
            times = []
            for _ in range(20):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                xw @ ww.t()
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b))
            times.sort()
            row["one_gpu_ms"] = times[len(times) // 2]
            del xw, ww
            print(json.dumps(row), flush=True)
        dist.barrier()
        del x, w
        torch.cuda.empty_cache()
    dist.destroy_process_group()


if __name__ == "__main__":
    gpus = int(sys.argv[1]) if len(sys.argv) > 1 else torch.cuda.device_count()
    print(json.dumps({"torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                      "device": torch.cuda.get_device_name(0), "gpus": gpus}), flush=True)
    mp.spawn(worker, args=(gpus, 29517), nprocs=gpus)
