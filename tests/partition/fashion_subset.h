#ifndef RINGLEADER_TESTS_PARTITION_FASHION_SUBSET_H_
#define RINGLEADER_TESTS_PARTITION_FASHION_SUBSET_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace ringleader::testing {

// Debian's Fashion-MNIST (dataset-fashion-mnist).
inline constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

// Writes the first `train` training and `test` test samples of the IDX
// dataset in `source` as an IDX dataset (unpacked) in directory `dir`;
// returns `dir`. Fails when `source` is missing or smaller.
absl::StatusOr<std::string> WriteIdxSubset(const std::string& source,
                                           const std::string& dir,
                                           int64_t train, int64_t test);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_PARTITION_FASHION_SUBSET_H_
