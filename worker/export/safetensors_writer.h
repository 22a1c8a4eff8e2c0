#ifndef RINGLEADER_WORKER_EXPORT_SAFETENSORS_WRITER_H_
#define RINGLEADER_WORKER_EXPORT_SAFETENSORS_WRITER_H_

// The safetensors format (Hugging Face's; what `safetensors.torch.load_file`
// reads): an 8-byte little-endian header length N, N bytes of JSON mapping
// each tensor's name to {"dtype", "shape", "data_offsets": [begin, end]}
// (offsets into the data that follows, contiguous, in order) plus an
// optional "__metadata__" object of strings, padded with spaces to a
// multiple of 8 so the data is aligned, then the tensors' bytes in C order,
// little-endian.

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "worker/model/model.h"

namespace ringleader {

// Writes `tensors` (any device; copied to the CPU) to `path` atomically
// (common/atomic_file.h). InvalidArgument for an empty or
// duplicate name, or a dtype safetensors has no name for (complex, quantized).
absl::Status WriteSafetensors(
    const std::vector<NamedTensor>& tensors, const std::string& path,
    const std::map<std::string, std::string>& metadata = {});

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_EXPORT_SAFETENSORS_WRITER_H_
