#ifndef RINGLEADER_WORKER_DATA_NPY_FILE_H_
#define RINGLEADER_WORKER_DATA_NPY_FILE_H_

// A .npy file memory-mapped with its header checked (npy_header.h): the
// array's bytes are read in place, row by row, never copied whole.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "worker/data/mapped_file.h"
#include "worker/data/npy_header.h"

namespace ringleader {

// Movable, not copyable; immutable once opened, so thread-safe to read.
class NpyFile {
 public:
  // Maps and parses `path`; errors are MappedFile::Open's and
  // ParseNpyHeader's, naming the path.
  static absl::StatusOr<NpyFile> Open(const std::string& path);

  const std::string& path() const { return file_.path(); }
  const NpyHeader& header() const { return header_; }
  NpyDtype dtype() const { return header_.dtype; }
  // The array's bytes (header().data_bytes of them).
  const uint8_t* data() const { return file_.data() + header_.data_offset; }

  // For an array of at least one dimension: shape[0] rows of the remaining
  // dimensions each.
  int64_t rows() const { return header_.shape.empty() ? 1 : header_.shape[0]; }
  size_t row_elements() const { return row_elements_; }
  size_t row_bytes() const { return row_elements_ * NpyDtypeSize(dtype()); }
  // Row `i`, which must be in [0, rows()).
  const uint8_t* row(int64_t i) const {
    return data() + static_cast<size_t>(i) * row_bytes();
  }

 private:
  NpyFile(MappedFile file, NpyHeader header);

  MappedFile file_;
  NpyHeader header_;
  size_t row_elements_ = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_NPY_FILE_H_
