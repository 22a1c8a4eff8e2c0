#ifndef RINGLEADER_COORDINATOR_WORKER_TOKEN_H_
#define RINGLEADER_COORDINATOR_WORKER_TOKEN_H_

// The secret a registration gets (RegisterResponse.worker_token). The
// coordinator keeps only its SHA-256: a copy of its database or memory gives
// nobody a token to call with.

#include <string>

#include "absl/strings/string_view.h"

namespace ringleader {

// 128 bits from OpenSSL's CSPRNG, as 32 hex digits. Aborts if the CSPRNG
// fails (nothing safe to hand out then).
std::string NewWorkerToken();

// SHA-256 of `token` (32 raw bytes).
std::string WorkerTokenHash(absl::string_view token);

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_WORKER_TOKEN_H_
