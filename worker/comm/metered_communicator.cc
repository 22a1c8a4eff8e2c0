#include "worker/comm/metered_communicator.h"

#include <chrono>

namespace ringleader {
namespace {

class MeteredWork final : public Work {
 public:
  MeteredWork(std::unique_ptr<Work> inner, metrics::Histogram* seconds)
      : inner_(std::move(inner)),
        seconds_(seconds),
        start_(std::chrono::steady_clock::now()) {}

  absl::Status Wait() override {
    absl::Status s = inner_->Wait();
    if (!observed_) {
      observed_ = true;
      seconds_->Observe(std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start_)
                            .count());
    }
    return s;
  }

 private:
  const std::unique_ptr<Work> inner_;
  metrics::Histogram* const seconds_;
  const std::chrono::steady_clock::time_point start_;
  bool observed_ = false;
};

}  // namespace

std::unique_ptr<Work> MeteredCommunicator::AllReduceSumAsync(void* data,
                                                             size_t count,
                                                             DataType type) {
  bytes_->Increment(static_cast<double>(count * DataTypeSize(type)));
  return std::make_unique<MeteredWork>(
      inner()->AllReduceSumAsync(data, count, type), seconds_);
}

std::unique_ptr<Work> MeteredCommunicator::AllReduceSumAsyncThen(
    void* data, size_t count, DataType type, std::function<void()> on_done) {
  bytes_->Increment(static_cast<double>(count * DataTypeSize(type)));
  return std::make_unique<MeteredWork>(
      inner()->AllReduceSumAsyncThen(data, count, type, std::move(on_done)),
      seconds_);
}

}  // namespace ringleader
