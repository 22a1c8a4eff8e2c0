#ifndef RINGLEADER_WORKER_COMM_LOST_RESULT_COMMUNICATOR_H_
#define RINGLEADER_WORKER_COMM_LOST_RESULT_COMMUNICATOR_H_

// Fault injection for tests, never on a production path (the worker's
// "Fault injection (tests)" flags): a Communicator that runs every
// collective for real and then, for the all-reduces `lose` selects when
// they are launched, tells its caller the operation failed. The peers got
// this rank's contribution and completed the operation; this rank acts as
// if the last message of the ring had been lost. That is the one way a
// generation can end with a rank a step behind its peers (issue 19), and a
// real all-reduce cannot be made to complete on only some ranks otherwise.

#include <functional>
#include <memory>

#include "worker/comm/communicator.h"

namespace ringleader {

class LostResultCommunicator final : public ForwardingCommunicator {
 public:
  // `lose` is asked once per all-reduce, at launch, on the issuing thread.
  LostResultCommunicator(Communicator* inner, std::function<bool()> lose)
      : ForwardingCommunicator(inner), lose_(std::move(lose)) {}

  std::unique_ptr<Work> AllReduceSumAsync(void* data, size_t count,
                                          DataType type) override;
  // `on_done` still runs where `inner` completes the operation.
  std::unique_ptr<Work> AllReduceSumAsyncThen(
      void* data, size_t count, DataType type,
      std::function<void()> on_done) override;

 private:
  std::unique_ptr<Work> MaybeLose(std::unique_ptr<Work> work);

  const std::function<bool()> lose_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_COMM_LOST_RESULT_COMMUNICATOR_H_
