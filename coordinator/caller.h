#ifndef RINGLEADER_COORDINATOR_CALLER_H_
#define RINGLEADER_COORDINATOR_CALLER_H_

// Who makes a WorkerService call, as the call shows it: the worker
// credentials it carries (common/worker_credential.h) and, with client
// certificates, the certificate's identity. The gRPC handlers read it
// (coordinator/server/caller_of.h) and the calls judge it against the
// registry and the live generations (coordinator/caller_checks.h).

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"

namespace ringleader {

// More credentials than this on one call or stream are refused: a host
// agent serves that many ranks many times over.
inline constexpr size_t kMaxCallerCredentials = 4096;

struct Caller {
  // Token by worker id: usually one; a shared BarrierStream's several.
  absl::flat_hash_map<std::string, std::string> tokens;
  // The client certificate's identity (its SANs, else its CN, joined by
  // ","): "" on a connection without one.
  std::string peer_identity;
  // The connection the call came over (gRPC's peer, "ipv4:HOST:PORT"): ""
  // for direct callers.
  std::string peer_address;

  // A caller speaking for one worker (tests, the Coordinator's direct users).
  static Caller Of(const std::string& worker_id, const std::string& token,
                   std::string peer_identity = "");
  // Null when the caller carries no credential of `worker_id`.
  const std::string* TokenOf(const std::string& worker_id) const;
  // Adds a credential; INVALID_ARGUMENT for an empty id or token or past
  // kMaxCallerCredentials.
  absl::Status Add(const std::string& worker_id, const std::string& token);
};

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_CALLER_H_
