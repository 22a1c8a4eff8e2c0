#ifndef RINGLEADER_WORKER_DATA_MAPPED_FILE_H_
#define RINGLEADER_WORKER_DATA_MAPPED_FILE_H_

// A read-only memory mapping of a whole file. Datasets read their rows
// straight from it, so a rank touches only the pages of its own shard and a
// file larger than RAM costs address space, not memory: the page cache holds
// what was read recently and the kernel drops it under pressure.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace ringleader {

// Owns the mapping (unmapped on destruction); movable, not copyable. The
// file descriptor is closed once mapped: the mapping keeps the file alive.
// The bytes are immutable through this class, so concurrent readers are
// safe; but if another process truncates the file while it is mapped,
// reading the lost pages raises SIGBUS, which no check here can prevent
// (datasets are not supposed to change under a running job).
class MappedFile {
 public:
  // Maps `path`. Errors name the path: NotFound, PermissionDenied (from
  // open's errno), InvalidArgument when it is not a regular file (a
  // directory, a FIFO, a device), or the errno of fstat/mmap. An empty file
  // is fine: size() 0, data() nullptr.
  static absl::StatusOr<MappedFile> Open(const std::string& path);

  // An empty mapping of no file.
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  void Unmap();

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_MAPPED_FILE_H_
