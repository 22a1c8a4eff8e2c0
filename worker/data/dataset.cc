#include "worker/data/dataset.h"

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ringleader {

absl::Status CheckIndices(const int64_t* indices, size_t n, int64_t size) {
  for (size_t i = 0; i < n; ++i) {
    if (indices[i] < 0 || indices[i] >= size) {
      return absl::OutOfRangeError(
          absl::StrCat("sample index ", indices[i], " (position ", i,
                       ") is outside the dataset of ", size, " samples"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ringleader
