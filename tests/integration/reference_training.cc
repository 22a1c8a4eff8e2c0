#include "tests/integration/reference_training.h"

#include <limits>
#include <memory>
#include <optional>

#include "common/distributed_sampler.h"
#include "gtest/gtest.h"
#include "worker/data/batch_loader.h"
#include "worker/data/job_data.h"
#include "worker/model/models.h"
#include "worker/model/optimizer.h"
#include "worker/torch_threads.h"
#include "worker/train/checkpoint/checkpoint.h"
#include "worker/train/step/grad_clip.h"
#include "worker/train/step/lr_schedule.h"
#include "worker/train/step/model_probe.h"
#include "worker/train/step/task.h"

namespace ringleader::testing {

std::shared_ptr<Model> BuildJobModel(const v1::JobSpec& spec,
                                     const Dataset& train) {
  ModelShape shape;
  if (spec.model().arch() != v1::MODEL_ARCH_TORCHSCRIPT) {
    const std::vector<FieldShape> fields = train.input_fields();
    EXPECT_EQ(fields.size(), 1u);
    if (!fields.empty()) shape.input_dims = fields[0].dims;
    shape.num_classes = spec.task().num_classes() > 0
                            ? spec.task().num_classes()
                            : train.num_classes();
  }
  torch::manual_seed(spec.seed());
  auto model = BuildModel(spec.model(), spec.seed(), shape);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

namespace {

// A single-process replay of a job: its model, loss and optimizer, and how
// far it is.
struct Replay {
  const v1::JobSpec& spec;
  const Dataset& train;
  Model& model;
  const Task& task;
  torch::optim::Optimizer& optimizer;
  int64_t step = 0;
  int64_t clipped = 0;
};

// Every rank's indices of `epoch` at `world` ranks from `offset`, as the
// coordinator plans them.
std::vector<std::vector<int64_t>> EpochShards(const Replay& r, int64_t epoch,
                                              int world, int64_t offset) {
  std::vector<std::vector<int64_t>> shards;
  for (int rank = 0; rank < world; ++rank) {
    v1::ShardAssignment a;
    a.set_seed(r.spec.seed());
    a.set_epoch(epoch);
    a.set_world_size(world);
    a.set_rank(rank);
    a.set_dataset_size(r.train.size());
    a.set_shuffle(r.spec.dataset().shuffle());
    a.set_drop_last(r.spec.dataset().drop_last());
    a.set_start_offset(offset);
    shards.push_back(ShardIndices(a));
  }
  return shards;
}

// One rank's gradients for the samples `indices` (each parameter's .grad
// after a backward from zero, as the rank's micro-batch leaves it before the
// all-reduce), or empty after a failed expectation.
std::vector<torch::Tensor> RankGradients(Replay& r,
                                         std::vector<int64_t> indices) {
  // The worker's own loader makes the tensors (transforms included).
  const int64_t n = static_cast<int64_t>(indices.size());
  auto loader = BatchLoader::Create(r.train, std::move(indices), n);
  EXPECT_TRUE(loader.ok()) << loader.status();
  if (!loader.ok()) return {};
  std::optional<Batch> b = (*loader)->Next();
  EXPECT_TRUE(b.has_value()) << (*loader)->status();
  if (!b.has_value()) return {};
  for (auto& p : r.model.Parameters()) p.mutable_grad() = at::Tensor();
  auto out = r.model.Forward(
      b->inputs, r.task.model_computes_loss() ? b->targets : at::Tensor());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  auto loss = r.task.Loss(*out, b->targets, b->sample_ids);
  EXPECT_TRUE(loss.ok()) << loss.status();
  if (!loss.ok()) return {};
  loss->backward();
  std::vector<torch::Tensor> grads;
  for (auto& p : r.model.Parameters()) grads.push_back(p.grad().clone());
  return grads;
}

// The all-reduced gradients, as the reducer leaves them: without
// compression the ranks' gradients summed in rank order and divided by the
// world size (what the shared-memory transport computes for any world, and
// every transport for 2 ranks: a + b == b + a); with fp16/bf16 compression,
// PyTorch's hook: each rank's gradient rounded to 16 bits and divided, the
// quotients summed in float32 in rank order and rounded once.
std::vector<torch::Tensor> AllReduced(
    const v1::JobSpec& spec,
    const std::vector<std::vector<torch::Tensor>>& per_rank) {
  const int world = static_cast<int>(per_rank.size());
  const v1::GradientCompression c = spec.ddp().gradient_compression();
  const bool compressed =
      c == v1::GRADIENT_COMPRESSION_FP16 || c == v1::GRADIENT_COMPRESSION_BF16;
  const at::ScalarType wire =
      c == v1::GRADIENT_COMPRESSION_FP16 ? at::kHalf : at::kBFloat16;
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < per_rank[0].size(); ++i) {
    torch::Tensor sum;
    for (int r = 0; r < world; ++r) {
      torch::Tensor sent =
          compressed ? per_rank[r][i].to(wire).div_(world).to(at::kFloat)
                     : per_rank[r][i];
      sum = r == 0 ? sent.clone() : sum + sent;
    }
    out.push_back(compressed  ? sum.to(wire).to(at::kFloat)
                  : world > 1 ? sum.div_(world)
                              : sum);
  }
  return out;
}

// Copies `from` into the model's buffers (BatchNorm's running statistics).
void SetBuffers(Model& model, const std::vector<torch::Tensor>& from) {
  torch::NoGradGuard no_grad;
  std::vector<NamedTensor> buffers = model.NamedBuffers();
  for (size_t i = 0; i < buffers.size(); ++i) buffers[i].tensor.copy_(from[i]);
}

std::vector<torch::Tensor> Buffers(const Model& model) {
  std::vector<torch::Tensor> out;
  for (const NamedTensor& t : model.NamedBuffers()) {
    out.push_back(t.tensor.detach().clone());
  }
  return out;
}

// One optimizer step, as the ranks take it together: each rank's gradients
// from its own batch of `rank_batches` (each starting from the same buffers,
// and rank 0's updated buffers kept: DDP's broadcast_buffers), all-reduced,
// clipped, then the scheduled learning rate. False (after a failed
// expectation) when something fails.
bool Step(Replay& r, std::vector<std::vector<int64_t>> rank_batches,
          int64_t planned) {
  const std::vector<torch::Tensor> start = Buffers(r.model);
  std::vector<torch::Tensor> rank0_buffers;
  std::vector<std::vector<torch::Tensor>> per_rank;
  for (auto& batch : rank_batches) {
    if (!per_rank.empty()) SetBuffers(r.model, start);
    per_rank.push_back(RankGradients(r, std::move(batch)));
    if (per_rank.back().empty()) return false;
    if (per_rank.size() == 1) rank0_buffers = Buffers(r.model);
  }
  SetBuffers(r.model, rank0_buffers);
  const std::vector<torch::Tensor> grads = AllReduced(r.spec, per_rank);
  std::vector<torch::Tensor> params = r.model.Parameters();
  for (size_t i = 0; i < params.size(); ++i)
    params[i].mutable_grad() = grads[i];
  const double norm = ClipGradNorm(params, r.spec.clip_grad_norm());
  if (r.spec.clip_grad_norm() > 0 && norm > r.spec.clip_grad_norm()) {
    ++r.clipped;
  }
  SetLearningRate(
      r.optimizer,
      LearningRateAt(r.spec.lr_schedule(), r.spec.optimizer().learning_rate(),
                     r.step, planned));
  r.optimizer.step();
  ++r.step;
  return true;
}

// Generation `g`'s steps, from its start until step `stop` or the job's end.
bool RunGeneration(Replay& r, const ReferenceGeneration& g, int64_t stop) {
  EXPECT_EQ(r.step, g.start.step) << "a generation starts where one stopped";
  const int64_t planned =
      PlannedOptimizerSteps(r.spec, r.train.size(), g.world, g.start);
  const size_t batch = static_cast<size_t>(r.spec.batch_size());
  for (int64_t epoch = g.start.epoch; epoch < r.spec.epochs(); ++epoch) {
    const std::vector<std::vector<int64_t>> shards =
        EpochShards(r, epoch, g.world,
                    epoch == g.start.epoch ? g.start.epoch_sample_offset : 0);
    const size_t per_rank = shards[0].size();
    for (size_t off = 0; off < per_rank; off += batch) {
      if (r.step >= stop) return true;
      std::vector<std::vector<int64_t>> rank_batches;
      for (const auto& shard : shards) {
        const size_t end = std::min(per_rank, off + batch);
        rank_batches.emplace_back(shard.begin() + off, shard.begin() + end);
      }
      if (!Step(r, std::move(rank_batches), planned)) return false;
    }
  }
  return true;
}

}  // namespace

std::vector<torch::Tensor> TrainSingleProcess(const v1::JobSpec& spec,
                                              int world) {
  return TrainSingleProcess(spec, {ReferenceGeneration{world, {}}});
}

std::vector<torch::Tensor> TrainSingleProcess(
    const v1::JobSpec& spec,
    const std::vector<ReferenceGeneration>& generations, int64_t* clipped) {
  EXPECT_LE(spec.gradient_accumulation_steps(), 1) << "not modelled";
  // One thread, as the workers run LibTorch and OpenBLAS (--threads=1):
  // each rank's gradient is then the same bits as the worker's. OpenBLAS's
  // pool too: some of its kernel families (Sandybridge, Haswell, Zen,
  // SkylakeX, issue 49) round differently on two threads than on one.
  at::set_num_threads(1);
  SetBlasThreads(1);
  auto data = LoadJobData(spec.dataset(), spec.seed());
  EXPECT_TRUE(data.ok()) << data.status();
  if (!data.ok()) return {};
  const Dataset& train = *data->train;
  std::shared_ptr<Model> model = BuildJobModel(spec, train);
  if (model == nullptr) return {};
  model->Train(true);
  const Task task(spec.task());
  // The input layout the trainer's probe chooses (channels-last images for a
  // convolutional model), so each rank's gradient is the same bits.
  EXPECT_TRUE(ProbeModel(*model, task, train, torch::kCPU).ok());
  auto optimizer = BuildOptimizer(spec.optimizer(), model->Parameters());
  EXPECT_TRUE(optimizer.ok()) << optimizer.status();
  if (!optimizer.ok()) return {};
  Replay replay{spec, train, *model, task, **optimizer};
  for (size_t g = 0; g < generations.size(); ++g) {
    const int64_t stop = g + 1 < generations.size()
                             ? generations[g + 1].start.step
                             : std::numeric_limits<int64_t>::max();
    if (!RunGeneration(replay, generations[g], stop)) return {};
  }
  if (clipped != nullptr) *clipped = replay.clipped;
  std::vector<torch::Tensor> params;
  for (auto& p : model->Parameters()) params.push_back(p.detach().clone());
  return params;
}

namespace {

// `spec`'s model with the checkpoint at `path` loaded (null on failure).
std::shared_ptr<Model> CheckpointModel(const v1::JobSpec& spec,
                                       const std::string& path) {
  std::shared_ptr<Model> model;
  if (spec.model().arch() == v1::MODEL_ARCH_TORCHSCRIPT) {
    auto m = BuildModel(spec.model(), spec.seed());
    EXPECT_TRUE(m.ok()) << m.status();
    if (m.ok()) model = *m;
  } else {
    auto data = LoadJobData(spec.dataset(), spec.seed());
    EXPECT_TRUE(data.ok()) << data.status();
    if (data.ok()) model = BuildJobModel(spec, *data->train);
  }
  if (model == nullptr) return nullptr;
  auto pos = LoadCheckpoint(path, *model, nullptr);
  EXPECT_TRUE(pos.ok()) << pos.status();
  return pos.ok() ? model : nullptr;
}

}  // namespace

std::vector<torch::Tensor> CheckpointParameters(const v1::JobSpec& spec,
                                                const std::string& path) {
  std::shared_ptr<Model> model = CheckpointModel(spec, path);
  if (model == nullptr) return {};
  std::vector<torch::Tensor> out;
  for (auto& p : model->Parameters()) out.push_back(p.detach().clone());
  return out;
}

std::map<std::string, torch::Tensor> NamedState(const Model& model) {
  std::map<std::string, torch::Tensor> out;
  for (const NamedTensor& t : model.NamedParameters()) {
    out[t.name] = t.tensor.detach().clone();
  }
  for (const NamedTensor& t : model.NamedBuffers()) {
    out[t.name] = t.tensor.detach().clone();
  }
  return out;
}

std::map<std::string, torch::Tensor> CheckpointState(const v1::JobSpec& spec,
                                                     const std::string& path) {
  std::shared_ptr<Model> model = CheckpointModel(spec, path);
  if (model == nullptr) return {};
  return NamedState(*model);
}

double MaxAbsDiff(const std::vector<torch::Tensor>& a,
                  const std::vector<torch::Tensor>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
  }
  return a.empty() || b.empty() ? 1e9 : m;
}

}  // namespace ringleader::testing
