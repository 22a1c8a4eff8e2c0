#include "worker/malloc_tuning.h"

#include <malloc.h>

namespace ringleader {

absl::Status KeepFreedMemoryForReuse() {
  constexpr int kMmapThreshold = 32 << 20;  // glibc's maximum on 64-bit.
  constexpr int kTrimThreshold = 1 << 30;
  if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) != 1 ||
      mallopt(M_TRIM_THRESHOLD, kTrimThreshold) != 1) {
    return absl::InternalError("mallopt refused the training settings");
  }
  return absl::OkStatus();
}

}  // namespace ringleader
