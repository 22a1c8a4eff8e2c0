#ifndef RINGLEADER_WORKER_DATA_BYTE_READER_H_
#define RINGLEADER_WORKER_DATA_BYTE_READER_H_

// Sequential reading of a file that may be gzip-compressed. Dataset files
// ship either way (Debian's dataset-fashion-mnist has .gz, a user's unpacked
// copy does not), so readers open them through this and never care which.

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ringleader {

// A forward-only stream of bytes. Not thread-safe: one reader per thread.
class ByteReader {
 public:
  virtual ~ByteReader() = default;

  // Reads up to `n` bytes into `out`; fewer only at the end of the data.
  // Returns 0 exactly at the end. For gzip, reaching the end means the whole
  // stream was checked (CRC and length trailer, no trailing garbage), so a
  // corrupt or truncated file is an error here, never a short read. Errors
  // name the file.
  virtual absl::StatusOr<size_t> Read(void* out, size_t n) = 0;

  // The path, for messages.
  virtual const std::string& path() const = 0;
};

// Opens `path`, looking at its first two bytes: 1f 8b means gzip (one or
// more concatenated members, RFC 1952), anything else is read as is.
// NotFound when the file does not exist, PermissionDenied/Internal for other
// open failures.
absl::StatusOr<std::unique_ptr<ByteReader>> OpenMaybeGzip(
    const std::string& path);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_BYTE_READER_H_
