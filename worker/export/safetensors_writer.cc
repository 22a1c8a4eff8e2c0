#include "worker/export/safetensors_writer.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/atomic_file.h"
#include "nlohmann/json.hpp"

namespace ringleader {
namespace {

absl::StatusOr<std::string> DtypeName(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return std::string("F32");
    case at::kDouble:
      return std::string("F64");
    case at::kHalf:
      return std::string("F16");
    case at::kBFloat16:
      return std::string("BF16");
    case at::kLong:
      return std::string("I64");
    case at::kInt:
      return std::string("I32");
    case at::kShort:
      return std::string("I16");
    case at::kChar:
      return std::string("I8");
    case at::kByte:
      return std::string("U8");
    case at::kBool:
      return std::string("BOOL");
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("safetensors has no dtype for ", c10::toString(t)));
  }
}

// The JSON header, padded with spaces to a multiple of 8 bytes.
absl::StatusOr<std::string> Header(
    const std::vector<NamedTensor>& tensors,
    const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> names;
  int64_t offset = 0;
  for (const NamedTensor& nt : tensors) {
    if (nt.name.empty() || nt.name == "__metadata__" ||
        !names.insert(nt.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad or duplicate tensor name '", nt.name, "'"));
    }
    absl::StatusOr<std::string> dtype = DtypeName(nt.tensor.scalar_type());
    if (!dtype.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(nt.name, ": ", dtype.status().message()));
    }
    const int64_t bytes = nt.tensor.numel() * nt.tensor.element_size();
    header[nt.name] = {{"dtype", *dtype},
                       {"shape", nt.tensor.sizes().vec()},
                       {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

}  // namespace

absl::Status WriteSafetensors(
    const std::vector<NamedTensor>& tensors, const std::string& path,
    const std::map<std::string, std::string>& metadata) {
  absl::StatusOr<std::string> header = Header(tensors, metadata);
  if (!header.ok()) {
    return absl::Status(header.status().code(),
                        absl::StrCat(path, ": ", header.status().message()));
  }
  AtomicFile file(path);
  uint64_t n = header->size();
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>(n >> (8 * i));
  if (absl::Status s = file.Append(absl::string_view(len, 8)); !s.ok()) {
    return s;
  }
  if (absl::Status s = file.Append(*header); !s.ok()) return s;
  for (const NamedTensor& nt : tensors) {
    // x86 and every CUDA host are little-endian, as the format is.
    const at::Tensor cpu = nt.tensor.detach().cpu().contiguous();
    if (absl::Status s = file.Append(absl::string_view(
            static_cast<const char*>(cpu.data_ptr()),
            static_cast<size_t>(cpu.numel() * cpu.element_size())));
        !s.ok()) {
      return s;
    }
  }
  return file.Commit();
}

}  // namespace ringleader
