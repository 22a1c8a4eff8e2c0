#include "tests/testing/numeric_bounds.h"

#include <cstdlib>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace ringleader::testing {

int64_t TrainingSeed(int64_t own) {
  int64_t offset = 0;
  const char* env = std::getenv("RINGLEADER_TEST_SEED_OFFSET");
  if (env != nullptr && !absl::SimpleAtoi(env, &offset)) offset = 0;
  return own + offset;
}

void ReportNumeric(const std::string& name, double value) {
  std::cout << absl::StrFormat("NUMERIC %s %.17g\n", name, value) << std::flush;
}

}  // namespace ringleader::testing
