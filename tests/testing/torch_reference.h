#ifndef RINGLEADER_TESTS_TESTING_TORCH_REFERENCE_H_
#define RINGLEADER_TESTS_TESTING_TORCH_REFERENCE_H_

// Runs tests/testing/torch_reference.py with Debian's /usr/bin/python3 and
// python3-torch, so C++ tests compare LibTorch code paths with what a
// PyTorch script computes. Tests skip when Python cannot import torch.

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace ringleader::testing {

// Whether /usr/bin/python3 imports torch (checked once).
bool PythonTorchAvailable();

// The script's answer to `request` (see torch_reference.py); INTERNAL with
// the script's output when it fails. Needs the script as a data dependency.
absl::StatusOr<nlohmann::json> RunTorchReference(const nlohmann::json& request);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_TORCH_REFERENCE_H_
