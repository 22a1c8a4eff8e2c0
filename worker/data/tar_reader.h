#ifndef RINGLEADER_WORKER_DATA_TAR_READER_H_
#define RINGLEADER_WORKER_DATA_TAR_READER_H_

// The regular files of a tar archive held in memory (a memory-mapped
// shard), in archive order: POSIX ustar and the GNU and pax extensions that
// Python's tarfile and GNU tar write (long names in 'L' members and pax
// "path" records, sizes in base-256). Directories, links and other members
// are passed over. Untrusted bytes: every header's checksum is verified,
// every size is checked against the archive's end, and the walk is bounded
// by the archive's size, so a corrupt shard is an error, never a crash or a
// loop (fuzzed by //fuzz:tar_reader_fuzzer).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ringleader {

struct TarMember {
  std::string name;     // The full path inside the archive.
  uint64_t offset = 0;  // Of its data, from the archive's start.
  uint64_t size = 0;
};

// DataLoss naming the header's byte offset when a header is corrupt (bad
// checksum, unreadable size) or a member's data runs past the end. The end
// is two zero blocks, or the end of the bytes after a whole member (a
// shard written without the trailer still reads).
absl::StatusOr<std::vector<TarMember>> ListTarMembers(const uint8_t* data,
                                                      size_t size);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_TAR_READER_H_
