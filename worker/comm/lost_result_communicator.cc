#include "worker/comm/lost_result_communicator.h"

#include <utility>

namespace ringleader {
namespace {

// Waits for the real operation (its buffer stays in use until then), then
// reports it lost unless it had failed anyway.
class LostWork final : public Work {
 public:
  explicit LostWork(std::unique_ptr<Work> inner) : inner_(std::move(inner)) {}
  absl::Status Wait() override {
    if (absl::Status s = inner_->Wait(); !s.ok()) return s;
    return absl::UnavailableError(
        "fault injection: this rank lost the all-reduce's result after its "
        "peers completed it");
  }

 private:
  const std::unique_ptr<Work> inner_;
};

}  // namespace

std::unique_ptr<Work> LostResultCommunicator::MaybeLose(
    std::unique_ptr<Work> work) {
  if (!lose_()) return work;
  return std::make_unique<LostWork>(std::move(work));
}

std::unique_ptr<Work> LostResultCommunicator::AllReduceSumAsync(void* data,
                                                                size_t count,
                                                                DataType type) {
  return MaybeLose(inner()->AllReduceSumAsync(data, count, type));
}

std::unique_ptr<Work> LostResultCommunicator::AllReduceSumAsyncThen(
    void* data, size_t count, DataType type, std::function<void()> on_done) {
  return MaybeLose(
      inner()->AllReduceSumAsyncThen(data, count, type, std::move(on_done)));
}

}  // namespace ringleader
