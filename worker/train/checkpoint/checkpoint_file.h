#ifndef RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_FILE_H_
#define RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringleader {

// The envelope of a checkpoint on disk: a magic line, the payload length and
// its CRC-32, then the payload (a LibTorch archive). Written atomically
// (common/atomic_file.h), so a reader sees the old file or the whole new
// one; a torn or corrupted file (a crash mid-write on a filesystem without
// atomic rename, a truncated copy) is detected on read, never loaded.
absl::Status WriteCheckpointFile(const std::string& path,
                                 const std::string& payload);

// DATA_LOSS for a torn or corrupt file, NOT_FOUND for a missing one.
absl::StatusOr<std::string> ReadCheckpointFile(const std::string& path);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINT_CHECKPOINT_FILE_H_
