#ifndef RINGLEADER_COMMON_SHARD_PATTERN_H_
#define RINGLEADER_COMMON_SHARD_PATTERN_H_

// WebDataset's shard names: brace patterns as its braceexpand reads them,
// "train-{000000..000099}.tar" (a numeric range, zero-padded to the width
// of its bounds) or "{a,b}" (alternatives), several per name (the product,
// left to right). Shared by the validator (a spec's pattern must expand)
// and the worker (which opens the shards).

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringleader {

// At most this many names from one pattern.
inline constexpr size_t kMaxShardNames = 100000;

// The names `pattern` stands for, in order. InvalidArgument for an
// unbalanced or nested brace, an empty or descending range, a range or a
// product past kMaxShardNames.
absl::StatusOr<std::vector<std::string>> ExpandShardPattern(
    absl::string_view pattern);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_SHARD_PATTERN_H_
