#ifndef RINGLEADER_COMMON_SPEC_VIOLATIONS_H_
#define RINGLEADER_COMMON_SPEC_VIOLATIONS_H_

// How the job spec validator words a violated rule, and how it gathers them:
// a bad spec is answered with every bad field at once, one line each, as a
// compiler lists its errors, instead of one field per submit.
//
// Every line has the shape users (and the CLI's flag hints) rely on:
//   invalid job spec: <proto.path> <rule> (got <value>)
// and the whole message stays small enough for a gRPC status (its trailer
// has a size limit): user values are quoted and cut (QuoteForError,
// common/quote_for_error.h), and the lines past a budget are counted, not
// listed.
//
// Pure functions and a value class; thread-compatible.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ringleader {

inline constexpr absl::string_view kInvalidSpecPrefix = "invalid job spec: ";

// InvalidArgument "invalid job spec: <field> <rule> (got <got>)".
absl::Status Invalid(absl::string_view field, absl::string_view rule,
                     absl::string_view got);

// The violations found in one spec, in the order found.
class SpecViolations {
 public:
  // At most this many lines are listed, and at most this many bytes in all;
  // the rest are counted in a last line.
  static constexpr size_t kMaxLines = 24;
  static constexpr size_t kMaxBytes = 4096;

  // Records `s` unless it is OK; whether it was OK, so that a check can stop
  // at the first broken rule of one field: `if (!v.Check(...)) return;`.
  bool Check(const absl::Status& s);

  bool empty() const { return lines_.empty(); }

  // OK when nothing was recorded; else one InvalidArgument whose message
  // holds the recorded lines, joined by "\n".
  absl::Status ToStatus() const;

 private:
  std::vector<std::string> lines_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_SPEC_VIOLATIONS_H_
