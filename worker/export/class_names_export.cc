#include "worker/export/class_names_export.h"

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ringleader {

std::string ClassNamesPath(const v1::ExportSpec& spec) {
  const std::string& model = spec.torchscript_path().empty()
                                 ? spec.safetensors_path()
                                 : spec.torchscript_path();
  if (model.empty()) return "";
  const size_t slash = model.rfind('/');
  const size_t dot = model.rfind('.');
  const bool has_ext = dot != std::string::npos &&
                       (slash == std::string::npos || dot > slash + 1);
  return absl::StrCat(has_ext ? model.substr(0, dot) : model, ".classes.json");
}

std::string ClassNamesJson(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += '"';
    for (unsigned char c : names[i]) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        out += absl::StrFormat("\\u%04x", c);
      } else {
        out += static_cast<char>(c);
      }
    }
    out += '"';
  }
  return out + "]\n";
}

absl::Status ExportClassNames(const std::vector<std::string>& names,
                              const v1::ExportSpec& spec) {
  const std::string path = ClassNamesPath(spec);
  if (names.empty() || path.empty()) return absl::OkStatus();
  const std::string tmp = absl::StrCat(path, ".tmp");
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << ClassNamesJson(names);
    f.close();
    if (!f) {
      return absl::InternalError(absl::StrCat("cannot write ", tmp));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot rename ", tmp, " to ", path));
  }
  return absl::OkStatus();
}

}  // namespace ringleader
