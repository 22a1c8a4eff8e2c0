#ifndef RINGLEADER_WORKER_TRAIN_CHECKPOINT_STATE_DIGEST_H_
#define RINGLEADER_WORKER_TRAIN_CHECKPOINT_STATE_DIGEST_H_

// A fingerprint of a rank's whole training state, for checking that the
// replicas of a data-parallel job agree bit for bit (issue 19's tests): the
// bytes of every parameter and buffer in the model's order and of every
// parameter's optimizer state in the optimizer's parameter order. Unlike a
// serialized checkpoint it does not depend on where the tensors live in
// memory (the optimizer's state is keyed by tensor addresses), so equal
// states on two processes give equal digests. Costs one pass over the
// state (and a host copy of device tensors): for a log line at recovery and
// at the job's end, not per step.

#include <string>

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace ringleader {

class Model;

// 16 hex digits (64-bit FNV-1a over dtypes, shapes and bytes).
std::string StateDigest(const Model& model,
                        const torch::optim::Optimizer& optimizer);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_CHECKPOINT_STATE_DIGEST_H_
