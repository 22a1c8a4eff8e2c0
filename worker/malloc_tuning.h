#ifndef RINGLEADER_WORKER_MALLOC_TUNING_H_
#define RINGLEADER_WORKER_MALLOC_TUNING_H_

#include "absl/status/status.h"

namespace ringleader {

// Makes glibc malloc keep freed memory for reuse instead of handing it back
// to the kernel. A training step frees and allocates the same large
// activation and gradient buffers every step; with glibc's defaults (blocks
// above an adaptive mmap threshold are unmapped on free, and the heap top is
// trimmed past 128 KiB) every step maps them again and the kernel
// page-faults and zero-fills each page: the CNN step measured 4-5x slower at
// batch 512 (bench/README.md). What tcmalloc or jemalloc, which PyTorch's
// CPU performance guide recommends preloading, do by default.
//
// Blocks up to 32 MiB (glibc's largest mmap threshold) come from the heap,
// and the heap is trimmed only past 1 GiB free at its top. The cost is
// resident memory that stays at the job's peak. INTERNAL if glibc refused.
absl::Status KeepFreedMemoryForReuse();

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MALLOC_TUNING_H_
