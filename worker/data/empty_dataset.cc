#include "worker/data/empty_dataset.h"

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "worker/data/dataset.h"

namespace ringleader {

absl::Status EmptyDataset::GatherFields(const int64_t* indices, size_t n,
                                        const std::vector<void*>& inputs_out,
                                        void* targets_out) const {
  (void)inputs_out;
  (void)targets_out;
  if (absl::Status s = CheckIndices(indices, n, 0); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat(description_, ": ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace ringleader
