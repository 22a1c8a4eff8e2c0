#ifndef RINGLEADER_WORKER_DDP_COMPRESSION_H_
#define RINGLEADER_WORKER_DDP_COMPRESSION_H_

#include <ATen/core/Tensor.h>

#include "worker/comm/communicator.h"

namespace ringleader {

// Gradient buckets all-reduced in a 16-bit float: PyTorch DDP's
// fp16_compress_hook and bf16_compress_hook (torch/distributed/algorithms/
// ddp_comm_hooks/default_hooks.py), step for step:
//   compressed = bucket.to(fp16 or bf16).div_(world_size)  // CompressBucket
//   all_reduce(compressed)                                 // sum, 16-bit
//   bucket.copy_(compressed)                               // DecompressBucket
// The division comes before the sum, in the 16-bit type, as PyTorch does:
// the sum of world_size gradients could overflow fp16 (largest 65504) where
// their mean does not. Each gradient is thus rounded twice before the
// all-reduce (the cast, then the division unless world_size is a power of
// two), the sum is rounded by the transport (communicator.h), and widening
// back is exact.
enum class BucketCompression { kNone, kFp16, kBf16 };

// The communicator type of a compressed bucket (kFloat32 for kNone).
DataType WireType(BucketCompression compression);

// A 16-bit buffer for a bucket of `numel` float32 elements, on `like`'s
// device (an undefined tensor for kNone).
at::Tensor NewWireBuffer(BucketCompression compression, int64_t numel,
                         const at::Tensor& like);

// wire = round16(round16(bucket) / world_size), on the tensors' device.
// May leave intermediate values in `bucket` (DecompressBucket overwrites it
// once the all-reduce is done).
void CompressBucket(at::Tensor& bucket, int world_size, at::Tensor& wire);

// bucket = float32(wire): exact.
void DecompressBucket(const at::Tensor& wire, at::Tensor& bucket);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DDP_COMPRESSION_H_
