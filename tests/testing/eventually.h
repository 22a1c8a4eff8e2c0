#ifndef RINGLEADER_TESTS_TESTING_EVENTUALLY_H_
#define RINGLEADER_TESTS_TESTING_EVENTUALLY_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ringleader::testing {

// Polls (every 5 ms, at most 30 s) until `done` holds; false if it never
// did. For conditions a test cannot be told about, such as a background
// thread's progress.
template <typename F>
bool Eventually(F done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_EVENTUALLY_H_
