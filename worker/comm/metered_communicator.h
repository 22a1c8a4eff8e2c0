#ifndef RINGLEADER_WORKER_COMM_METERED_COMMUNICATOR_H_
#define RINGLEADER_WORKER_COMM_METERED_COMMUNICATOR_H_

#include <memory>

#include "common/metrics.h"
#include "worker/comm/communicator.h"

namespace ringleader {

// A Communicator that counts each all-reduce's bytes when it is launched
// and observes its duration (launch to the first Wait() that returns) in a
// histogram, then forwards to `inner`. Recording is two relaxed atomic adds
// and two clock reads per collective, so the Reducer's overlap path is
// unchanged (bench/reducer_metrics_bench.cc prints the ratio). Everything
// else is forwarded as is.
class MeteredCommunicator final : public ForwardingCommunicator {
 public:
  MeteredCommunicator(Communicator* inner, metrics::Counter* bytes,
                      metrics::Histogram* seconds)
      : ForwardingCommunicator(inner), bytes_(bytes), seconds_(seconds) {}

  std::unique_ptr<Work> AllReduceSumAsync(void* data, size_t count,
                                          DataType type) override;
  // Metered the same way; `on_done` still runs where `inner` completes the
  // operation (the timeline's all-reduce end on Gloo's thread).
  std::unique_ptr<Work> AllReduceSumAsyncThen(
      void* data, size_t count, DataType type,
      std::function<void()> on_done) override;

 private:
  metrics::Counter* const bytes_;
  metrics::Histogram* const seconds_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_METERED_COMMUNICATOR_H_
