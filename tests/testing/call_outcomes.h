#ifndef RINGLEADER_TESTS_TESTING_CALL_OUTCOMES_H_
#define RINGLEADER_TESTS_TESTING_CALL_OUTCOMES_H_

#include <functional>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace ringleader::testing {

// The outcomes of async gRPC calls, in completion order; waits with a bound,
// never sleeps.
class CallOutcomes {
 public:
  // The callback of one call.
  std::function<void(grpc::Status)> Add() {
    return [this](grpc::Status s) {
      absl::MutexLock lock(&mu_);
      done_.push_back(std::move(s));
    };
  }
  // The first `n` outcomes, in completion order; empty on timeout.
  std::vector<grpc::Status> WaitFor(size_t n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return done_.size() >= n;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&reached), timeout)) return {};
    return done_;
  }

 private:
  absl::Mutex mu_;
  std::vector<grpc::Status> done_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_CALL_OUTCOMES_H_
