#include "common/port_file.h"

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace ringleader {

absl::Status WritePortFile(const std::string& path, int port) {
  if (path.empty()) return absl::OkStatus();
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << port << "\n";
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

}  // namespace ringleader
