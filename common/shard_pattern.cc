#include "common/shard_pattern.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ringleader {
namespace {

// "lo..hi" as numbers, padded to the bounds' width when they are padded.
absl::Status ExpandRange(absl::string_view body,
                         std::vector<std::string>* out) {
  const size_t dots = body.find("..");
  const absl::string_view lo_s = body.substr(0, dots);
  const absl::string_view hi_s = body.substr(dots + 2);
  uint64_t lo = 0, hi = 0;
  const auto digits = [](absl::string_view s) {
    return !s.empty() && s.size() <= 18 &&
           std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
  };
  if (!digits(lo_s) || !digits(hi_s) || !absl::SimpleAtoi(lo_s, &lo) ||
      !absl::SimpleAtoi(hi_s, &hi) || hi < lo) {
    return absl::InvalidArgumentError(absl::StrCat(
        "{", body, "} is not a range lo..hi of numbers, lo <= hi"));
  }
  if (hi - lo >= kMaxShardNames) {
    return absl::InvalidArgumentError(absl::StrCat(
        "{", body, "} names more than ", kMaxShardNames, " shards"));
  }
  const size_t width = lo_s.size() == hi_s.size() ? lo_s.size() : 0;
  for (uint64_t v = lo; v <= hi; ++v) {
    std::string s = absl::StrCat(v);
    if (s.size() < width) s.insert(0, width - s.size(), '0');
    out->push_back(std::move(s));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandShardPattern(
    absl::string_view pattern) {
  std::vector<std::string> names = {""};
  size_t pos = 0;
  while (pos < pattern.size()) {
    const size_t open = pattern.find_first_of("{}", pos);
    const absl::string_view literal = pattern.substr(pos, open - pos);
    for (std::string& n : names) absl::StrAppend(&n, literal);
    if (open == absl::string_view::npos) break;
    const size_t close = pattern.find_first_of("{}", open + 1);
    if (pattern[open] == '}' || close == absl::string_view::npos ||
        pattern[close] == '{') {
      return absl::InvalidArgumentError(
          absl::StrCat("unbalanced or nested braces at character ", open + 1));
    }
    const absl::string_view body = pattern.substr(open + 1, close - open - 1);
    std::vector<std::string> parts;
    if (body.find("..") != absl::string_view::npos) {
      if (absl::Status s = ExpandRange(body, &parts); !s.ok()) return s;
    } else {
      parts = absl::StrSplit(body, ',');
    }
    if (names.size() * parts.size() > kMaxShardNames) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the pattern names more than ", kMaxShardNames, " shards"));
    }
    std::vector<std::string> next;
    next.reserve(names.size() * parts.size());
    for (const std::string& n : names) {
      for (const std::string& p : parts) next.push_back(absl::StrCat(n, p));
    }
    names = std::move(next);
    pos = close + 1;
  }
  return names;
}

}  // namespace ringleader
