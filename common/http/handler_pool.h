#ifndef RINGLEADER_COMMON_HTTP_HANDLER_POOL_H_
#define RINGLEADER_COMMON_HTTP_HANDLER_POOL_H_

// The few threads that turn whole requests into responses for the
// connection loop (connection_loop.h): a bounded queue in, a list of
// finished responses out, and a wake-up for the loop when one finishes.
// Thread-safe.

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace ringleader::http {

// The response's bytes for one whole request from `peer_ip`:`peer_port`.
using Handler = std::function<std::string(
    absl::string_view request, const std::string& peer_ip, int peer_port)>;

class HandlerPool {
 public:
  struct Job {
    uint64_t id = 0;  // The connection's, handed back with its response.
    std::string request;
    std::string peer_ip;
    int peer_port = 0;
  };
  struct Done {
    uint64_t id = 0;
    std::string response;
  };

  // `wake` is called (on a pool thread) after each response is added.
  HandlerPool(int threads, int max_queued, Handler handler,
              std::function<void()> wake);
  // Finishes the requests being handled; drops the queued ones.
  ~HandlerPool();
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  // False, and nothing queued, when `max_queued` jobs already wait.
  bool Submit(Job job);
  // The responses finished since the last call.
  std::vector<Done> TakeDone();

 private:
  void Run();
  bool HasWorkOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int max_queued_;
  const Handler handler_;
  const std::function<void()> wake_;
  absl::Mutex mu_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<Done> done_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace ringleader::http

#endif  // RINGLEADER_COMMON_HTTP_HANDLER_POOL_H_
