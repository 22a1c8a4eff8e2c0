#include "common/port_file.h"

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"

namespace ringleader {

absl::Status WritePortFile(const std::string& path, int port) {
  if (path.empty()) return absl::OkStatus();
  if (absl::Status s = WriteFileAtomically(path, absl::StrCat(port, "\n"));
      !s.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot write ", path, ": ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace ringleader
