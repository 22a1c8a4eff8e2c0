#include "worker/data/npy_file.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "worker/data/mapped_file.h"
#include "worker/data/npy_header.h"

namespace ringleader {

absl::StatusOr<NpyFile> NpyFile::Open(const std::string& path) {
  absl::StatusOr<MappedFile> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  absl::StatusOr<NpyHeader> header =
      ParseNpyHeader(file->data(), file->size(), path);
  if (!header.ok()) return header.status();
  return NpyFile(*std::move(file), *std::move(header));
}

NpyFile::NpyFile(MappedFile file, NpyHeader header)
    : file_(std::move(file)), header_(std::move(header)) {
  // The header's size check has bounded the product of every dimension.
  size_t n = 1;
  for (size_t d = 1; d < header_.shape.size(); ++d) {
    n *= static_cast<size_t>(header_.shape[d]);
  }
  row_elements_ = n;
}

}  // namespace ringleader
