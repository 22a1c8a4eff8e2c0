#ifndef RINGLEADER_COMMON_PORT_FILE_H_
#define RINGLEADER_COMMON_PORT_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace ringleader {

// Writes `port` and a newline to `path` atomically (common/atomic_file.h),
// so a reader (a test, a script) never sees a partial number; nothing when
// `path` is empty. INTERNAL naming the path on failure.
absl::Status WritePortFile(const std::string& path, int port);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_PORT_FILE_H_
