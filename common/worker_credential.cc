#include "common/worker_credential.h"

#include "absl/strings/str_cat.h"

namespace ringleader {

std::string FormatWorkerCredential(const WorkerCredential& c) {
  return absl::StrCat(c.worker_id, ":", c.token);
}

std::optional<WorkerCredential> ParseWorkerCredential(absl::string_view value) {
  // Tokens are hex: the last ':' ends the id whatever the id holds.
  const size_t colon = value.rfind(':');
  if (colon == absl::string_view::npos || colon == 0 ||
      colon + 1 == value.size()) {
    return std::nullopt;
  }
  return WorkerCredential{std::string(value.substr(0, colon)),
                          std::string(value.substr(colon + 1))};
}

void AttachWorkerCredential(grpc::ClientContext* ctx,
                            const WorkerCredential& c) {
  if (c.empty()) return;
  ctx->AddMetadata(kWorkerCredentialMetadata, FormatWorkerCredential(c));
}

}  // namespace ringleader
