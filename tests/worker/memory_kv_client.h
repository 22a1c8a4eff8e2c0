#ifndef RINGLEADER_TESTS_WORKER_MEMORY_KV_CLIENT_H_
#define RINGLEADER_TESTS_WORKER_MEMORY_KV_CLIENT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "worker/comm/kv_client.h"

namespace ringleader {

// A KvClient over a map in memory, shared by ranks that are threads of one
// test process. Thread-safe.
class MemoryKvClient : public KvClient {
 public:
  absl::Status Set(const std::string& key, const std::string& value) override {
    absl::MutexLock lock(&mu_);
    map_[key] = value;
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::string>> Wait(
      const std::vector<std::string>& keys, absl::Duration timeout) override {
    absl::MutexLock lock(&mu_);
    auto all = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      for (const auto& k : keys) {
        if (map_.count(k) == 0) return false;
      }
      return true;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&all), timeout)) {
      return absl::DeadlineExceededError(
          absl::StrCat("keys not set after ", absl::FormatDuration(timeout)));
    }
    std::vector<std::string> out;
    for (const auto& k : keys) out.push_back(map_[k]);
    return out;
  }

  std::vector<std::string> Keys() {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& [k, v] : map_) out.push_back(k);
    return out;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, std::string> map_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader

#endif  // RINGLEADER_TESTS_WORKER_MEMORY_KV_CLIENT_H_
