#ifndef RINGLEADER_WORKER_MODEL_TORCH_STATUS_H_
#define RINGLEADER_WORKER_MODEL_TORCH_STATUS_H_

// LibTorch reports errors by throwing (c10::Error and friends); this project
// does not let exceptions cross its APIs. Each boundary catches and turns the
// exception into a Status with this one helper, so messages look alike.

#include <exception>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ringleader {

// "<context>: <torch's message>", with torch's C++ backtrace left out and
// its multi-line messages (TorchScript tracebacks) joined into one line.
// Thread-safe.
absl::Status TorchErrorToStatus(absl::StatusCode code,
                                absl::string_view context,
                                const std::exception& e);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_MODEL_TORCH_STATUS_H_
