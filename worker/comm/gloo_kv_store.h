#ifndef RINGLEADER_WORKER_COMM_GLOO_KV_STORE_H_
#define RINGLEADER_WORKER_COMM_GLOO_KV_STORE_H_

#include <chrono>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gloo/rendezvous/store.h"
#include "worker/comm/kv_client.h"

namespace ringleader {

// Gloo's rendezvous store over the coordinator's KV service (a KvClient), the
// way c10d's PrefixStore scopes a store: every key is prefixed, so two
// communicators of one generation ("gloo/0/", "gloo/1/") never collide.
//
// Gloo's store API reports errors by throwing; like gloo's own HashStore and
// FileStore, this throws ::gloo::IoException (a timeout, an unreachable
// coordinator, an ended generation). The first such failure is also kept as an
// absl::Status (first_error()) so the caller that catches the exception can
// report the original code, e.g. ABORTED for an ended generation.
//
// get() blocks until the key exists (gloo's connectFullMesh calls get() for
// keys a peer may not have set yet, as FileStore::get waits). A wait without
// timeout (gloo's kNoTimeout) waits `default_timeout`: every wait is bounded.
// Thread-safe when the KvClient is.
class GlooKvStore : public ::gloo::rendezvous::Store {
 public:
  GlooKvStore(KvClient* kv, std::string prefix, absl::Duration default_timeout);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  const std::string& prefix() const { return prefix_; }
  // OK until an operation failed; then the first failure.
  absl::Status first_error() const;

 private:
  std::vector<std::string> Prefixed(const std::vector<std::string>& keys) const;
  // Records `s` and throws it as ::gloo::IoException.
  [[noreturn]] void Fail(const absl::Status& s);

  KvClient* const kv_;
  const std::string prefix_;
  const absl::Duration default_timeout_;
  mutable absl::Mutex mu_;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_GLOO_KV_STORE_H_
