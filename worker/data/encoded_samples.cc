#include "worker/data/encoded_samples.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "worker/data/image_transform.h"

namespace ringleader {

void SkippedFiles::Add(const std::string& what) {
  ++count;
  if (examples.size() < 5) examples.push_back(what);
}

absl::Status CheckEncodedImageEnds(absl::string_view head,
                                   absl::string_view tail, uint64_t size) {
  if (size == 0) return absl::DataLossError("an empty file (0 bytes)");
  const auto* h = reinterpret_cast<const uint8_t*>(head.data());
  switch (SniffImageFormat(h, head.size())) {
    case ImageFormat::kJpeg:
      // Entropy-coded data never holds FF D9: without one near the end,
      // the file was cut (a few bytes may follow the marker).
      if (tail.find("\xFF\xD9") == absl::string_view::npos) {
        return absl::DataLossError("a truncated JPEG (no end marker)");
      }
      return absl::OkStatus();
    case ImageFormat::kPng:
      if (tail.find("IEND") == absl::string_view::npos) {
        return absl::DataLossError("a truncated PNG (no IEND chunk)");
      }
      return absl::OkStatus();
    case ImageFormat::kOther:
      break;
  }
  return absl::DataLossError(
      absl::StrCat("not a JPEG or PNG image (it starts with \"",
                   absl::CHexEscape(head.substr(0, 8)), "\")"));
}

}  // namespace ringleader
