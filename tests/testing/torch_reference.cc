#include "tests/testing/torch_reference.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ringleader::testing {
namespace {

constexpr char kScript[] = "tests/testing/torch_reference.py";

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

bool PythonTorchAvailable() {
  static const bool available =
      std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
  return available;
}

absl::StatusOr<nlohmann::json> RunTorchReference(
    const nlohmann::json& request) {
  // One file pair per call: tests may call it several times.
  static int calls = 0;
  const std::string base =
      absl::StrCat(::testing::TempDir(), "/torch_reference_", ++calls);
  {
    std::ofstream out(base + ".json");
    out << request.dump();
  }
  // stderr apart: a warning there must not break the JSON.
  const std::string command =
      absl::StrCat("/usr/bin/python3 ", kScript, " ", base, ".json > ", base,
                   ".out 2> ", base, ".err");
  const int rc = std::system(command.c_str());
  const std::string output = Slurp(base + ".out");
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat(command, " failed (", rc, "): ", Slurp(base + ".err")));
  }
  nlohmann::json answer =
      nlohmann::json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded()) {
    return absl::InternalError(absl::StrCat("not JSON: ", output));
  }
  return answer;
}

}  // namespace ringleader::testing
