// What the driver and the TMA engine do with a tensor map whose layers overlap: a layer stride of
// 0 (one matrix broadcast to every member of a batch, as cublasGemmStridedBatchedEx accepts for A
// or B) and a layer stride smaller than one matrix. The CUDA driver API's documentation lists
// "a multiple of 16 below 2^40" for every stride and says nothing of 0 or of overlap, so the
// emulator's rule (kernels-gpu/src/device/tma.rs, TensorMapSpec::validate) is taken from this run.
//
//   nvcc -arch=sm_90a -std=c++17 -o tma_layer_stride tma_layer_stride.cu -lcuda && ./tma_layer_stride
#include <cuda.h>
#include <cuda/barrier>
#include <cstdio>
#include <vector>

using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

constexpr int ROWS = 16, COLS = 16, LAYERS = 4;

// Loads box (0, 0, z) for every layer z and writes it out: what a GEMM's producer does per member.
__global__ void load_layers(const __grid_constant__ CUtensorMap map, float *out) {
  __shared__ alignas(128) float tile[ROWS * COLS];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier bar;
  if (threadIdx.x == 0) {
    init(&bar, blockDim.x);
    cde::fence_proxy_async_shared_cta();
  }
  __syncthreads();
  for (int z = 0; z < LAYERS; ++z) {
    barrier::arrival_token token;
    if (threadIdx.x == 0) {
      cde::cp_async_bulk_tensor_3d_global_to_shared(tile, &map, 0, 0, z, bar);
      token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(tile));
    } else {
      token = bar.arrive();
    }
    bar.wait(std::move(token));
    for (int i = threadIdx.x; i < ROWS * COLS; i += blockDim.x) out[z * ROWS * COLS + i] = tile[i];
    __syncthreads();
  }
}

// One case: encode with this layer stride, load every layer, compare with what a plain pointer
// walk (base + z * stride) reads.
static void run(const char *name, unsigned long long layer_stride_bytes, CUdeviceptr source,
                const std::vector<float> &host) {
  CUtensorMap map;
  cuuint64_t dims[3] = {ROWS, COLS, LAYERS};
  cuuint64_t strides[2] = {ROWS * sizeof(float), layer_stride_bytes};
  cuuint32_t box[3] = {ROWS, COLS, 1}, element_strides[3] = {1, 1, 1};
  CUresult status = cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, (void *)source, dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS) {
    const char *text = nullptr;
    cuGetErrorName(status, &text);
    printf("| %s | %llu | refused by cuTensorMapEncodeTiled: %s | - |\n", name, layer_stride_bytes, text);
    return;
  }
  float *out;
  cudaMalloc(&out, LAYERS * ROWS * COLS * sizeof(float));
  load_layers<<<1, 128>>>(map, out);
  cudaError_t launched = cudaDeviceSynchronize();
  if (launched != cudaSuccess) {
    printf("| %s | %llu | encoded; the load failed: %s | - |\n", name, layer_stride_bytes,
           cudaGetErrorString(launched));
    cudaDeviceReset();
    return;
  }
  std::vector<float> got(LAYERS * ROWS * COLS);
  cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int z = 0; z < LAYERS; ++z)
    for (int i = 0; i < ROWS * COLS; ++i)
      wrong += got[z * ROWS * COLS + i] != host[z * layer_stride_bytes / sizeof(float) + i];
  printf("| %s | %llu | encoded and loaded | %d of %d elements differ from base + z·stride |\n", name,
         layer_stride_bytes, wrong, LAYERS * ROWS * COLS);
  cudaFree(out);
}

int main() {
  cudaFree(0);
  std::vector<float> host(LAYERS * ROWS * COLS);
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i);
  CUdeviceptr source;
  cuMemAlloc(&source, host.size() * sizeof(float));
  cuMemcpyHtoD(source, host.data(), host.size() * sizeof(float));
  printf("| layers | layer stride (bytes) | driver | TMA load |\n|---|---:|---|---|\n");
  run("apart (one matrix)", ROWS * COLS * sizeof(float), source, host);
  run("broadcast", 0, source, host);
  run("overlapping by 3/4", ROWS * COLS * sizeof(float) / 4, source, host);
  run("16 bytes apart", 16, source, host);
  return 0;
}
