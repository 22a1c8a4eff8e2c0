#ifndef RINGLEADER_TESTS_WORKER_DATA_GATHER_HELPER_H_
#define RINGLEADER_TESTS_WORKER_DATA_GATHER_HELPER_H_

// Gathers samples of any Dataset into buffers sized from its fields, and
// reads them back typed, for the dataset tests.

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "worker/data/dataset.h"

namespace ringleader {
namespace testing_files {

struct Gathered {
  absl::Status status;
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<uint8_t> targets;

  template <typename T>
  std::vector<T> input(size_t k) const {
    return As<T>(inputs[k]);
  }
  template <typename T>
  std::vector<T> target() const {
    return As<T>(targets);
  }

 private:
  template <typename T>
  static std::vector<T> As(const std::vector<uint8_t>& bytes) {
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
};

inline Gathered Gather(const Dataset& dataset,
                       const std::vector<int64_t>& indices) {
  Gathered g;
  std::vector<void*> buffers;
  for (const FieldShape& field : dataset.input_fields()) {
    g.inputs.emplace_back(indices.size() * field.bytes(), 0xAB);
  }
  for (std::vector<uint8_t>& buffer : g.inputs)
    buffers.push_back(buffer.data());
  g.targets.assign(indices.size() * dataset.target_field().bytes(), 0xAB);
  g.status = dataset.GatherFields(indices.data(), indices.size(), buffers,
                                  g.targets.data());
  return g;
}

}  // namespace testing_files
}  // namespace ringleader

#endif  // RINGLEADER_TESTS_WORKER_DATA_GATHER_HELPER_H_
