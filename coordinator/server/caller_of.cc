#include "coordinator/server/caller_of.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/quote_for_error.h"
#include "common/worker_credential.h"

namespace ringleader {

absl::StatusOr<Caller> CallerOf(const grpc::ServerContextBase& ctx) {
  Caller out;
  auto [begin, end] = ctx.client_metadata().equal_range(
      grpc::string_ref(kWorkerCredentialMetadata));
  for (auto it = begin; it != end; ++it) {
    const absl::string_view value(it->second.data(), it->second.size());
    std::optional<WorkerCredential> c = ParseWorkerCredential(value);
    if (!c.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(kWorkerCredentialMetadata,
                       " metadata must be \"<worker_id>:<worker_token>\" (got ",
                       QuoteForError(value), ")"));
    }
    if (absl::Status s = out.Add(c->worker_id, c->token); !s.ok()) return s;
  }
  std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    std::vector<std::string> ids;
    for (const grpc::string_ref& id : auth->GetPeerIdentity()) {
      ids.emplace_back(id.data(), id.size());
    }
    out.peer_identity = absl::StrJoin(ids, ",");
  }
  out.peer_address = ctx.peer();
  return out;
}

}  // namespace ringleader
