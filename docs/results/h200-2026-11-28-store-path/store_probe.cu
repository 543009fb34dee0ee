// The store path's own ceiling, without a GEMM: how fast can a persistent grid of one block per
// SM write C (1 024 members of 2048 x 2048 bf16, 8.6 GB) with TMA stores, as a function of the
// tile's shape, the box's shape, the stores kept in flight, the L2 hint, and how many threads
// issue them? Shared memory's contents are irrelevant here (never initialised): only the
// traffic is measured. Baselines: cudaMemsetAsync and a plain vectorised store kernel.
//
// nvcc -O3 -arch=sm_90a -o store_probe store_probe.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>

#define CK(x) do { auto e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
#define CKD(x) do { auto e = (x); if (e != CUDA_SUCCESS) { const char* s; cuGetErrorString(e, &s); printf("%s: %s\n", #x, s); exit(1);} } while (0)

constexpr int COLS = 2048, ROWS_PER_MEMBER = 2048, MEMBERS = 1024;
constexpr long long ROWS = (long long)ROWS_PER_MEMBER * MEMBERS;
constexpr size_t BYTES = (size_t)ROWS * COLS * 2;

struct Variant {
  const char* name;
  int tile_m, tile_n;   // rows x columns of C per tile
  int box_h, box_w;     // rows x columns per TMA store
  int depth;            // bulk groups (tiles) left reading shared memory before the next tile's
  int hint;             // 0: none, 1: L2 evict_first, 2: evict_last, 3: evict_normal
  int issuers;          // warps whose lane 0 issues (box b goes to warp b % issuers)
  int column_order;     // 0: tiles along a row of tiles first, 1: down a column of tiles first
  int blocks_per_sm;
  int swizzle;          // 0: none, 1: 128B
  int box_sync;         // 1: wait after each box (the store per subtile), 0: per tile
};

__global__ void store_tiles(const __grid_constant__ CUtensorMap map, Variant v, int tiles_m_total,
                            int tiles_n) {
  extern __shared__ __align__(1024) unsigned char smem[];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane != 0 || warp >= v.issuers) return;
  uint64_t policy = 0;
  if (v.hint == 1) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  if (v.hint == 2) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  if (v.hint == 3) asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(policy));
  int boxes_m = v.tile_m / v.box_h, boxes_n = v.tile_n / v.box_w;
  int boxes = boxes_m * boxes_n;
  int box_bytes = v.box_h * v.box_w * 2;
  long long tiles = (long long)tiles_m_total * tiles_n;
  uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  int tile_bytes = v.tile_m * v.tile_n * 2;
  int k = 0;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x, ++k) {
    long long tm, tn;
    if (v.column_order) { tm = t % tiles_m_total; tn = t / tiles_m_total; }
    else { tm = t / tiles_n; tn = t % tiles_n; }
    // two tile-sized staging areas in turn
    uint32_t stage = base + (k & 1) * tile_bytes;
    for (int b = warp; b < boxes; b += v.issuers) {
      int bm = b / boxes_n, bn = b % boxes_n;
      int x = (int)(tn * v.tile_n + bn * v.box_w);
      int y = (int)(tm * v.tile_m + bm * v.box_h);
      uint32_t src = stage + b * box_bytes;
      if (v.hint)
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%1, %2}], [%3], %4;"
                     :: "l"(&map), "r"(x), "r"(y), "r"(src), "l"(policy) : "memory");
      else
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                     :: "l"(&map), "r"(x), "r"(y), "r"(src) : "memory");
      if (v.box_sync) {
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      }
    }
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    if (v.depth == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    else if (v.depth == 1) asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
    else asm volatile("cp.async.bulk.wait_group.read 3;" ::: "memory");
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}


// The epilogue's shape without a mainloop: two consumer warpgroups (threads 128..383; warpgroup
// 0, the producer's, idles) each write their 256 x 64 half of a 256 x 128 tile into staging
// (st.shared.v4, 256 bytes a thread), publish it to the async proxy, and their thread 0 stores
// four 64 x 64 boxes. `sets` staging sets in turn: before writing a set, thread 0 waits until
// the stores that last read it are done reading. `spin` clock cycles of "mainloop" per tile.
__global__ void __launch_bounds__(384, 1) epilogue_tiles(const __grid_constant__ CUtensorMap map,
                                                         int tiles_m_total, int tiles_n, int sets,
                                                         int spin) {
  extern __shared__ __align__(1024) unsigned char smem[];
  int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  if (wg == 0) return;
  int half = wg - 1;
  uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  long long tiles = (long long)tiles_m_total * tiles_n;
  int k = 0;
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x, ++k) {
    long long tm = tile / tiles_n, tn = tile % tiles_n;
    if (spin) { long long s = clock64(); while (clock64() - s < spin) {} }
    uint32_t set = base + ((k % sets) * 2 + half) * 32768;
    if (t == 0) {
      if (sets == 1) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      else asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
    }
    asm volatile("bar.sync %0, 128;" :: "r"(1 + half) : "memory");
    for (int i = 0; i < 16; ++i) {
      uint32_t at = set + (i * 128 + t) * 16;
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" :: "r"(at), "r"(i), "r"(t), "r"(k), "r"(0) : "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("bar.sync %0, 128;" :: "r"(1 + half) : "memory");
    if (t == 0) {
      for (int b = 0; b < 4; ++b) {
        int x = (int)(tn * 128 + half * 64);
        int y = (int)(tm * 256 + b * 64);
        uint32_t src = set + b * 8192;
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                     :: "l"(&map), "r"(x), "r"(y), "r"(src) : "memory");
      }
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
  }
  if (t == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

__global__ void plain_stores(uint4* c, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  uint4 z = make_uint4(threadIdx.x, 0, 0, 0);
  for (; i < n; i += stride) c[i] = z;
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

int main() {
  CKD(cuInit(0));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  int sms = prop.multiProcessorCount;
  printf("device: %s, %d SMs, C: %d members of %d x %d bf16 = %.2f GB\n", prop.name, sms, MEMBERS,
         ROWS_PER_MEMBER, COLS, BYTES / 1e9);
  void* c; CK(cudaMalloc(&c, BYTES));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto time = [&](auto launch) {
    launch(); CK(cudaDeviceSynchronize());
    std::vector<float> ms;
    for (int r = 0; r < 7; ++r) {
      cudaEventRecord(e0); launch(); cudaEventRecord(e1); CK(cudaEventSynchronize(e1));
      float t; cudaEventElapsedTime(&t, e0, e1); ms.push_back(t);
    }
    CK(cudaGetLastError());
    return median(ms);
  };
  float m = time([&] { cudaMemsetAsync(c, 0, BYTES); });
  printf("| %-44s | %8.3f ms | %5.2f TB/s |\n", "cudaMemsetAsync", m, BYTES / m / 1e9);
  m = time([&] { plain_stores<<<sms * 4, 512>>>((uint4*)c, BYTES / 16); });
  printf("| %-44s | %8.3f ms | %5.2f TB/s |\n", "st.global.v4, grid-stride", m, BYTES / m / 1e9);

  std::vector<Variant> vs = {
    {"256x128 tile, 64x64 boxes, one thread (ours)", 256, 128, 64, 64, 1, 0, 1, 0, 1, 1, 0},
    {"  same, depth 0", 256, 128, 64, 64, 0, 0, 1, 0, 1, 1, 0},
    {"  same, depth 3", 256, 128, 64, 64, 3, 0, 1, 0, 1, 1, 0},
    {"  same, evict_first", 256, 128, 64, 64, 1, 1, 1, 0, 1, 1, 0},
    {"  same, evict_normal hint", 256, 128, 64, 64, 1, 3, 1, 0, 1, 1, 0},
    {"  same, 8 issuing warps", 256, 128, 64, 64, 1, 0, 8, 0, 1, 1, 0},
    {"  same, tiles down columns first", 256, 128, 64, 64, 1, 0, 1, 1, 1, 1, 0},
    {"  same, 2 blocks per SM", 256, 128, 64, 64, 1, 0, 1, 0, 2, 1, 0},
    {"  same, wait per box", 256, 128, 64, 64, 1, 0, 1, 0, 1, 1, 1},
    {"  same, no swizzle", 256, 128, 64, 64, 1, 0, 1, 0, 1, 0, 0},
    {"256x128 tile, 32x64 boxes (4 KiB)", 256, 128, 32, 64, 1, 0, 1, 0, 1, 1, 0},
    {"256x128 tile, 128x64 boxes (16 KiB)", 256, 128, 128, 64, 1, 0, 1, 0, 1, 1, 0},
    {"256x128 tile, 64x128 boxes, no swizzle", 256, 128, 64, 128, 1, 0, 1, 0, 1, 0, 0},
    {"128x256 tile, 64x64 boxes", 128, 256, 64, 64, 1, 0, 1, 0, 1, 1, 0},
    {"64x512 tile, 64x64 boxes", 64, 512, 64, 64, 1, 0, 1, 0, 1, 1, 0},
    {"128x256 tile, 64x256 boxes, no swizzle", 128, 256, 64, 256, 1, 0, 1, 0, 1, 0, 0},
    {"128x128 tile, 64x64 boxes, 2 blocks/SM", 128, 128, 64, 64, 1, 0, 1, 0, 2, 1, 0},
  };
  for (auto& v : vs) {
    CUtensorMap map;
    cuuint64_t dims[2] = {COLS, (cuuint64_t)ROWS};
    cuuint64_t strides[1] = {COLS * 2};
    cuuint32_t box[2] = {(cuuint32_t)v.box_w, (cuuint32_t)v.box_h};
    cuuint32_t es[2] = {1, 1};
    CKD(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, c, dims, strides, box, es,
                               CU_TENSOR_MAP_INTERLEAVE_NONE,
                               v.swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                               CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    int smem = 2 * v.tile_m * v.tile_n * 2;
    CK(cudaFuncSetAttribute(store_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    int tiles_m = (int)(ROWS / v.tile_m), tiles_n = COLS / v.tile_n;
    int grid = sms * v.blocks_per_sm;
    m = time([&] { store_tiles<<<grid, 256, smem>>>(map, v, tiles_m, tiles_n); });
    printf("| %-44s | %8.3f ms | %5.2f TB/s |\n", v.name, m, BYTES / m / 1e9);
  }

  {
    CUtensorMap map;
    cuuint64_t dims[2] = {COLS, (cuuint64_t)ROWS};
    cuuint64_t strides[1] = {COLS * 2};
    cuuint32_t box[2] = {64, 64};
    cuuint32_t es[2] = {1, 1};
    CKD(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, c, dims, strides, box, es,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    int tiles_m = (int)(ROWS / 256), tiles_n = COLS / 128;
    // one store thread per block, fewer blocks: what one SM's TMA stores reach alone
    for (int blocks : {8, 33, 66}) {
      Variant v = {"", 256, 128, 64, 64, 1, 0, 1, 0, 1, 1, 0};
      m = time([&] { store_tiles<<<blocks, 256, 2 * 65536>>>(map, v, tiles_m, tiles_n); });
      char name[64]; snprintf(name, 64, "stores only, %d blocks", blocks);
      printf("| %-44s | %8.3f ms | %5.2f TB/s | %5.1f GB/s per SM |\n", name, m, BYTES / m / 1e9, BYTES / m / 1e6 / blocks);
    }
    CK(cudaFuncSetAttribute(epilogue_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    for (int sets : {1, 2, 3}) for (int spin : {0, 1000, 2000, 4000}) {
      m = time([&] { epilogue_tiles<<<sms, 384, sets * 65536>>>(map, tiles_m, tiles_n, sets, spin); });
      char name[64]; snprintf(name, 64, "epilogue, %d staging set(s), spin %d", sets, spin);
      printf("| %-44s | %8.3f ms | %5.2f TB/s | %5.2f us per tile |\n", name, m, BYTES / m / 1e9, m * 1e3 / ((double)tiles_m * tiles_n / sms));
    }
  }
  return 0;
}
