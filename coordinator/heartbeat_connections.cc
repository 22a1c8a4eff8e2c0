#include "coordinator/heartbeat_connections.h"

#include <algorithm>

namespace ringleader {

void HeartbeatConnections::Heard(const std::string& worker_id,
                                 const std::string& peer, absl::Time now) {
  absl::MutexLock lock(&mu_);
  std::vector<Seen>& seen = workers_[worker_id];
  auto it = std::find_if(seen.begin(), seen.end(),
                         [&](const Seen& s) { return s.peer == peer; });
  if (it != seen.end()) seen.erase(it);
  seen.push_back({peer, now});
  if (seen.size() > kKept) seen.erase(seen.begin());
}

void HeartbeatConnections::Forget(const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  workers_.erase(worker_id);
}

bool HeartbeatConnections::OnlyOver(const std::string& worker_id,
                                    const std::string& peer, absl::Time now,
                                    absl::Duration window) const {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return false;
  bool over_peer = false;
  for (const Seen& s : it->second) {
    if (now - s.last >= window) continue;  // Too old to say anything.
    if (s.peer != peer) return false;
    over_peer = true;
  }
  return over_peer;
}

}  // namespace ringleader
