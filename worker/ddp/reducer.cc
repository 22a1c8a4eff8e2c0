#include "worker/ddp/reducer.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "worker/ddp/collective_stream.h"

namespace ringleader {

struct Reducer::State {
  Communicator* comm = nullptr;
  // A world of one: every gradient already is the average, so nothing is
  // launched, waited for or divided (unless Options::communicate_alone).
  bool solo = false;
  Options options;
  std::vector<at::Tensor> params;
  BucketPlan plan;
  std::vector<at::Tensor> buffers;  // One flat buffer per bucket.
  // With compression, each bucket's 16-bit copy, which is all-reduced.
  std::vector<at::Tensor> wire;
  // Kept alive so the hooks stay attached (a variable holds its accumulator
  // only weakly).
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;

  absl::Mutex mu;
  bool sync ABSL_GUARDED_BY(mu) = true;
  bool in_backward ABSL_GUARDED_BY(mu) = false;
  std::vector<size_t> pending ABSL_GUARDED_BY(mu);  // Per bucket.
  size_t next_launch ABSL_GUARDED_BY(mu) = 0;
  std::vector<std::unique_ptr<Work>> works ABSL_GUARDED_BY(mu);
  std::vector<bool> seen ABSL_GUARDED_BY(mu);  // Per parameter, this step.
  absl::Status error ABSL_GUARDED_BY(mu);
  Stats stats ABSL_GUARDED_BY(mu);

  void ResetStep() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    pending.assign(plan.buckets.size(), 0);
    for (size_t b = 0; b < plan.buckets.size(); ++b) {
      pending[b] = plan.buckets[b].params.size();
    }
    seen.assign(params.size(), false);
    next_launch = 0;
    works.clear();
  }

  // Launches, in index order, every bucket whose gradients are all ready.
  void LaunchReadyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const DataType type =
        wire.empty() ? DataType::kFloat32 : WireType(options.compression);
    while (next_launch < plan.buckets.size() && pending[next_launch] == 0) {
      at::Tensor* sent = &buffers[next_launch];
      if (!wire.empty()) {
        // The cast runs here, as soon as the bucket is complete, so it
        // overlaps backward like the all-reduce it feeds.
        CompressBucket(buffers[next_launch], comm->world_size(),
                       wire[next_launch]);
        sent = &wire[next_launch];
      }
      // NCCL reads the bucket on its own stream.
      RecordForCollective(*sent, *comm);
      const int64_t bytes =
          sent->numel() * static_cast<int64_t>(DataTypeSize(type));
      Timeline* const tl = options.timeline;
      if (tl != nullptr && tl->enabled()) {
        const int64_t start = Timeline::NowUs(), step = tl->step();
        const int64_t bucket = static_cast<int64_t>(next_launch);
        works.push_back(comm->AllReduceSumAsyncThen(
            sent->data_ptr(), sent->numel(), type,
            [tl, start, step, bucket, bytes] {
              tl->Record("allreduce", Timeline::Track::kComm, start,
                         Timeline::NowUs(), step, bucket, bytes);
            }));
      } else {
        works.push_back(
            comm->AllReduceSumAsync(sent->data_ptr(), sent->numel(), type));
      }
      stats.allreduce_calls++;
      stats.allreduce_bytes += bytes;
      if (in_backward) stats.buckets_launched_during_backward++;
      ++next_launch;
    }
  }

  void OnGradReady(size_t param) {
    if (solo) return;
    absl::MutexLock lock(&mu);
    if (!sync || !options.overlap || seen[param]) return;
    seen[param] = true;
    --pending[plan.bucket_of[param]];
    LaunchReadyLocked();
  }
};

absl::StatusOr<std::unique_ptr<Reducer>> Reducer::Create(
    Communicator* comm, std::vector<at::Tensor> params, Options options) {
  if (comm == nullptr) return absl::InvalidArgumentError("no communicator");
  if (params.empty()) return absl::InvalidArgumentError("no parameters");
  auto state = std::make_shared<State>();
  state->comm = comm;
  state->solo = comm->world_size() == 1 && !options.communicate_alone;
  state->options = options;
  std::vector<size_t> numels;
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& p = params[i];
    if (!p.defined() || p.scalar_type() != at::kFloat || p.is_sparse() ||
        !p.requires_grad()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter ", i, " must be a dense float32 tensor requiring grad"));
    }
    if (i > 0 && p.device() != params[0].device()) {
      return absl::InvalidArgumentError("parameters span several devices");
    }
    numels.push_back(static_cast<size_t>(p.numel()));
  }
  state->params = std::move(params);
  state->plan = PlanBuckets(numels, 4, options.first_bucket_bytes,
                            options.bucket_cap_bytes);
  torch::NoGradGuard no_grad;
  for (const BucketPlan::Bucket& b : state->plan.buckets) {
    state->buffers.push_back(
        torch::zeros({static_cast<int64_t>(b.numel)},
                     state->params[0].options().requires_grad(false)));
    if (options.compression != BucketCompression::kNone && !state->solo) {
      state->wire.push_back(NewWireBuffer(options.compression,
                                          state->buffers.back().numel(),
                                          state->buffers.back()));
    }
  }
  for (size_t i = 0; i < state->params.size(); ++i) {
    at::Tensor& p = state->params[i];
    const size_t b = state->plan.bucket_of[i];
    const size_t off = state->plan.buckets[b].offsets[state->plan.slot_of[i]];
    p.mutable_grad() = state->buffers[b]
                           .narrow(0, static_cast<int64_t>(off), p.numel())
                           .view(p.sizes());
    std::shared_ptr<torch::autograd::Node> acc =
        torch::autograd::impl::grad_accumulator(p);
    std::weak_ptr<State> weak = state;
    acc->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [weak, i](const torch::autograd::variable_list& outputs,
                  const torch::autograd::variable_list&) {
          if (auto s = weak.lock()) s->OnGradReady(i);
          return outputs;
        }));
    state->accumulators.push_back(std::move(acc));
  }
  {
    absl::MutexLock lock(&state->mu);
    state->ResetStep();
  }
  return std::unique_ptr<Reducer>(new Reducer(std::move(state)));
}

Reducer::~Reducer() {
  // Outstanding work references the buffers: let it finish first.
  absl::MutexLock lock(&state_->mu);
  for (auto& w : state_->works) w->Wait().IgnoreError();
  state_->works.clear();
}

absl::Status Reducer::BroadcastParameters(const std::vector<at::Tensor>& extra,
                                          int root) {
  torch::NoGradGuard no_grad;
  auto broadcast = [&](at::Tensor& t) -> absl::Status {
    if (!t.is_contiguous()) {
      return absl::InvalidArgumentError("broadcast needs contiguous tensors");
    }
    RecordForCollective(t, *state_->comm);
    return state_->comm->Broadcast(t.data_ptr(), t.numel() * t.element_size(),
                                   root);
  };
  for (at::Tensor& p : state_->params) {
    if (absl::Status s = broadcast(p); !s.ok()) return s;
  }
  for (at::Tensor t : extra) {
    if (absl::Status s = broadcast(t); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void Reducer::ZeroGrad() {
  torch::NoGradGuard no_grad;
  for (at::Tensor& b : state_->buffers) b.zero_();
}

void Reducer::PrepareForBackward(bool sync) {
  absl::MutexLock lock(&state_->mu);
  state_->ResetStep();
  state_->sync = sync;
  state_->in_backward = true;
  state_->error = absl::OkStatus();
}

absl::Status Reducer::FinishBackward() {
  std::vector<std::unique_ptr<Work>> works;
  {
    absl::MutexLock lock(&state_->mu);
    state_->in_backward = false;
    if (!state_->sync || state_->solo) return absl::OkStatus();
    // Buckets whose parameters got no gradient this step (unused), and all
    // of them on the non-overlapped path, are launched now, in order.
    std::fill(state_->pending.begin(), state_->pending.end(), 0);
    state_->LaunchReadyLocked();
    works = std::move(state_->works);
    state_->works.clear();
  }
  const absl::Time start = absl::Now();
  absl::Status first_error;
  // Heartbeats say which bucket this rank waits for: every bucket was
  // launched this step, in index order.
  PhaseClock* const phases = state_->options.timeline != nullptr
                                 ? state_->options.timeline->phases()
                                 : nullptr;
  for (size_t b = 0; b < works.size(); ++b) {
    if (phases != nullptr) phases->SetBucket(static_cast<int32_t>(b));
    absl::Status s = works[b]->Wait();
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  if (phases != nullptr) phases->SetBucket(-1);
  const double waited = absl::ToDoubleSeconds(absl::Now() - start);
  {
    absl::MutexLock lock(&state_->mu);
    state_->stats.wait_seconds += waited;
  }
  if (!first_error.ok()) return first_error;
  torch::NoGradGuard no_grad;
  if (!state_->wire.empty()) {
    // Already divided before the sum, as PyTorch's compression hooks do.
    for (size_t b = 0; b < state_->buffers.size(); ++b) {
      DecompressBucket(state_->wire[b], state_->buffers[b]);
    }
    return absl::OkStatus();
  }
  const double world = state_->comm->world_size();
  for (at::Tensor& b : state_->buffers) b.div_(world);
  return absl::OkStatus();
}

const BucketPlan& Reducer::plan() const { return state_->plan; }

Reducer::Stats Reducer::stats() const {
  absl::MutexLock lock(&state_->mu);
  return state_->stats;
}

}  // namespace ringleader
