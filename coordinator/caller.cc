#include "coordinator/caller.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {

Caller Caller::Of(const std::string& worker_id, const std::string& token,
                  std::string peer_identity) {
  Caller c;
  c.tokens[worker_id] = token;
  c.peer_identity = std::move(peer_identity);
  return c;
}

const std::string* Caller::TokenOf(const std::string& worker_id) const {
  auto it = tokens.find(worker_id);
  return it == tokens.end() ? nullptr : &it->second;
}

absl::Status Caller::Add(const std::string& worker_id,
                         const std::string& token) {
  if (worker_id.empty() || token.empty()) {
    return absl::InvalidArgumentError(
        "a worker credential needs a worker_id and a worker_token");
  }
  if (tokens.size() >= kMaxCallerCredentials && !tokens.contains(worker_id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "more than ", kMaxCallerCredentials, " worker credentials on a call"));
  }
  tokens[worker_id] = token;
  return absl::OkStatus();
}

}  // namespace ringleader
