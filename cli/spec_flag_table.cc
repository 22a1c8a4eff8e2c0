#include "cli/spec_flag_table.h"

#include <array>
#include <utility>

#include "absl/strings/str_split.h"

namespace ringleader::cli {
namespace {

constexpr absl::string_view kModel = "Model";
constexpr absl::string_view kDataset = "Dataset";
constexpr absl::string_view kOptimizer = "Optimizer";
constexpr absl::string_view kTraining = "Training";
constexpr absl::string_view kWorkers = "Workers";
constexpr absl::string_view kDdp = "DDP";
constexpr absl::string_view kTimeline = "Timeline";
constexpr absl::string_view kTask = "Task";
constexpr absl::string_view kExport = "Export";

// --help lists the groups in the order of their first row, and each
// group's flags in table order: --name's row first puts Training first.
constexpr SpecFlag kSpecFlags[] = {
    {"--name", "name", kTraining, "Job name, [a-z0-9-], 1..63 characters"},
    {"--model", "model.arch", kModel, "mlp|cnn|torchscript"},
    {"--torchscript_path", "model.torchscript_path", kModel,
     "The .pt file on every worker (--model=torchscript)"},
    {"--hidden", "model.hidden_sizes", kModel,
     "MLP hidden widths, comma separated (default 256,128)"},
    {"--dataset", "dataset.format", kDataset,
     "idx|synthetic|npy|tokens|image_folder|tar_shards"},
    {"--data_path", "dataset.path", kDataset,
     "Directory with the IDX files (--dataset=idx)"},
    {"--train_size", "dataset.synthetic_train_size", kDataset,
     "Synthetic training samples (--dataset=synthetic)"},
    {"--test_size", "dataset.synthetic_test_size", kDataset,
     "Synthetic test samples (--dataset=synthetic)"},
    {"--shuffle", "dataset.shuffle", kDataset,
     "Shuffle every epoch (seed + epoch)", /*negation=*/"--no-shuffle"},
    {"--drop_last", "dataset.drop_last", kDataset,
     "Drop the tail that does not divide by the world size"},
    {"--random_crop_padding", "dataset.augmentation.random_crop_padding",
     kDataset,
     "Augment training images: pad by N, crop back at a random offset "
     "(default 0: off)"},
    {"--horizontal_flip", "dataset.augmentation.horizontal_flip", kDataset,
     "Augment training images: mirror left-right with probability 1/2"},
    {"--train_inputs", "dataset.train.inputs", kDataset,
     "Training .npy files, one per model input, comma separated "
     "(--dataset=npy)",
     "", "", /*starts=*/"dataset.train"},
    {"--train_targets", "dataset.train.targets", kDataset,
     "Training targets .npy (--dataset=npy)"},
    {"--test_inputs", "dataset.test.inputs", kDataset,
     "Test .npy files, as many as --train_inputs (--dataset=npy)", "", "",
     /*starts=*/"dataset.test"},
    {"--test_targets", "dataset.test.targets", kDataset,
     "Test targets .npy (--dataset=npy)"},
    {"--input_scale", "dataset.transform.scale", kDataset,
     "Multiply inputs by this, e.g. 0.00392156862745098 (1/255) for 8-bit "
     "pixels (--dataset=npy)",
     "", "", /*starts=*/"dataset.transform"},
    {"--input_mean", "dataset.transform.mean", kDataset,
     "Per-channel mean subtracted after scaling, comma separated"},
    {"--input_std", "dataset.transform.std", kDataset,
     "Per-channel std divided by, one per --input_mean"},
    {"--train_tokens", "dataset.train_tokens", kDataset,
     "Training token file, .bin or 1-D .npy (--dataset=tokens)"},
    {"--test_tokens", "dataset.test_tokens", kDataset,
     "Test token file (--dataset=tokens)"},
    {"--token_dtype", "dataset.token_dtype", kDataset,
     "uint16|uint32: element type of a .bin token file (default uint16)"},
    {"--block_size", "dataset.block_size", kDataset,
     "Tokens of context per sample (--dataset=tokens)"},
    {"--train_root", "dataset.train_root", kDataset,
     "Training ImageFolder root, ROOT/CLASS/IMAGE (--dataset=image_folder)"},
    {"--test_root", "dataset.test_root", kDataset,
     "Test ImageFolder root (--dataset=image_folder)"},
    {"--train_shards", "dataset.train_shards", kDataset,
     "Training tar shards: paths or brace patterns such as "
     "/data/train-{000000..000099}.tar, comma separated "
     "(--dataset=tar_shards)"},
    {"--test_shards", "dataset.test_shards", kDataset,
     "Test tar shards (--dataset=tar_shards)"},
    {"--image_size", "dataset.image.size", kDataset,
     "Side of the crop the model sees (default 224)", "", "",
     /*starts=*/"dataset.image"},
    {"--resize_size", "dataset.image.resize_size", kDataset,
     "Evaluation's Resize before CenterCrop (default size*256/224)"},
    {"--min_scale", "dataset.image.min_scale", kDataset,
     "RandomResizedCrop's smallest area fraction (default 0.08)"},
    {"--max_scale", "dataset.image.max_scale", kDataset,
     "RandomResizedCrop's largest area fraction (default 1)"},
    {"--min_ratio", "dataset.image.min_ratio", kDataset,
     "RandomResizedCrop's smallest aspect ratio (default 3/4)"},
    {"--max_ratio", "dataset.image.max_ratio", kDataset,
     "RandomResizedCrop's largest aspect ratio (default 4/3)"},
    {"--no_random_crop", "dataset.image.no_random_crop", kDataset,
     "Train on Resize + CenterCrop instead of RandomResizedCrop"},
    {"--full_decode", "dataset.image.full_decode", kDataset,
     "Decode every JPEG whole, never at a reduced scale"},
    {"--skip_corrupt", "dataset.skip_corrupt", kDataset,
     "Skip and count unreadable image files instead of failing the job"},
    {"--loader_threads", "dataset.loader_threads", kDataset,
     "Loader threads per rank (default: the host's CPUs / its ranks)"},
    {"--prefetch_batches", "dataset.prefetch_batches", kDataset,
     "Batches prepared ahead of the step (default 2; 4 for images)"},
    {"--optimizer", "optimizer.kind", kOptimizer, "sgd|adam|adamw"},
    {"--lr", "optimizer.learning_rate", kOptimizer, "Learning rate, > 0"},
    {"--momentum", "optimizer.momentum", kOptimizer, "SGD momentum, in [0, 1)"},
    {"--weight_decay", "optimizer.weight_decay", kOptimizer,
     "Weight decay, in [0, 1]"},
    {"--beta1", "optimizer.beta1", kOptimizer,
     "Adam/AdamW first-moment decay, in [0, 1) (default 0.9)"},
    {"--beta2", "optimizer.beta2", kOptimizer,
     "Adam/AdamW second-moment decay, in [0, 1) (default 0.999)"},
    {"--eps", "optimizer.eps", kOptimizer,
     "Adam/AdamW eps, > 0 (default 1e-8)"},
    {"--nesterov", "optimizer.nesterov", kOptimizer,
     "SGD with Nesterov momentum"},
    {"--no_decay_bias_and_norm", "optimizer.no_decay_bias_and_norm", kOptimizer,
     "No weight decay for parameters of < 2 dimensions (biases, norms)"},
    {"--lr_schedule", "lr_schedule.kind", kOptimizer,
     "constant|step|cosine|linear (default constant)"},
    {"--warmup_steps", "lr_schedule.warmup_steps", kOptimizer,
     "Linear warmup over this many optimizer steps (default 0)"},
    {"--min_lr", "lr_schedule.min_lr", kOptimizer,
     "Learning-rate floor of step, cosine and linear (default 0)"},
    {"--decay_steps", "lr_schedule.decay_steps", kOptimizer,
     "Cosine/linear decay horizon in optimizer steps (default: the job's "
     "planned steps)"},
    {"--lr_step_size", "lr_schedule.step_size", kOptimizer,
     "Step schedule: decay every N optimizer steps"},
    {"--lr_gamma", "lr_schedule.gamma", kOptimizer,
     "Step schedule: decay factor, in (0, 1) (default 0.1)"},
    {"--clip_grad_norm", "clip_grad_norm", kOptimizer,
     "Clip gradients to this global L2 norm (default 0: off)"},
    {"--epochs", "epochs", kTraining, "Epochs to train"},
    {"--batch_size", "batch_size", kTraining, "Per-rank batch size"},
    {"--seed", "seed", kTraining, "Seed of the shuffle and the model init"},
    {"--grad_accum", "gradient_accumulation_steps", kTraining,
     "Micro-steps accumulated per optimizer step (default 1)"},
    {"--device", "device", kTraining, "cpu|cuda (default cpu)"},
    {"--precision", "precision", kTraining,
     "fp32|bf16: bf16 is mixed precision as torch.autocast (default fp32)", "",
     /*spellings=*/"bf16=bf16_mixed"},
    {"--progress_every", "progress_every_steps", kTraining,
     "Report progress every N steps (default 10)"},
    {"--progress_interval_ms", "progress_min_interval_ms", kTraining,
     "Report progress at most once per this many ms (default 100)"},
    {"--checkpoint_dir", "checkpoint_dir", kTraining,
     "Absolute directory for checkpoints; empty disables them"},
    {"--checkpoint_every", "checkpoint_every_steps", kTraining,
     "Checkpoint every K steps (0: at epoch end)"},
    {"--checkpoint_synchronous", "checkpoint_synchronous", kTraining,
     "Write checkpoints on the training thread, not in the background "
     "(slower; for a host where the state's extra copy does not fit)"},
    {"--evaluate_every_epoch", "evaluate_every_epoch", kTraining,
     "Evaluate on the test split after every epoch, not only the last"},
    {"--resume", "resume", kTraining,
     "Continue from the last checkpoint of a job of this name"},
    {"--min_workers", "min_workers", kWorkers, "Fewest workers to start"},
    {"--max_workers", "max_workers", kWorkers, "Most workers to take"},
    {"--workers", "min_workers,max_workers", kWorkers,
     "Exactly N workers (sets --min_workers and --max_workers)"},
    {"--max_restarts", "max_restarts", kWorkers,
     "Restarts allowed for the whole job"},
    {"--last_call_ms", "rendezvous_last_call_ms", kWorkers,
     "After min_workers joined, wait this long for more (default 1000)"},
    {"--rendezvous_timeout_ms", "rendezvous_timeout_ms", kWorkers,
     "Fail if min_workers do not join in time (default 600000)"},
    {"--bucket_cap_bytes", "ddp.bucket_cap_bytes", kDdp,
     "Gradient bucket size cap (default 25 MiB)"},
    {"--first_bucket_bytes", "ddp.first_bucket_bytes", kDdp,
     "First gradient bucket size (default 1 MiB)"},
    {"--allreduce_after_backward", "ddp.allreduce_after_backward", kDdp,
     "All-reduce after backward instead of overlapping (slower)"},
    {"--communicate_alone", "ddp.communicate_alone", kDdp,
     "All-reduce gradient buckets even at world size 1 (as PyTorch DDP does; "
     "one GPU then exercises the NCCL path)"},
    {"--cpu_transport", "ddp.cpu_transport", kDdp,
     "auto|gloo|shm: how CPU ranks all-reduce (default auto: shared memory "
     "when all ranks are on one host)"},
    {"--gradient_compression", "ddp.gradient_compression", kDdp,
     "none|fp16|bf16: all-reduce gradient buckets in a 16-bit float (half the "
     "bytes; default none)"},
    {"--buckets_in_flight", "ddp.buckets_in_flight", kDdp,
     "Gloo: gradient all-reduces in flight at once, 1..8 (default 2)"},
    {"--balance_batches", "ddp.balance_batches", kDdp,
     "CPU ranks share each global batch by measured speed, so none waits "
     "for a slower one (same samples a step; not bit-reproducible)"},
    {"--timeline_dir", "timeline_dir", kTimeline,
     "Absolute directory where each rank writes <job>-rank<R>.trace.json "
     "(Chrome trace format)"},
    {"--timeline_steps", "timeline_steps", kTimeline,
     "Optimizer steps recorded per rank (default 200)"},
    {"--task", "task.kind", kTask,
     "classification|language_model|regression (default classification)"},
    {"--loss", "task.loss", kTask,
     "cross_entropy|mse|l1|model (default: the task's; model: the "
     "TorchScript model returns it)"},
    {"--ignore_index", "task.ignore_index", kTask,
     "Target value cross-entropy and the metrics skip (default -100)"},
    {"--label_smoothing", "task.label_smoothing", kTask,
     "Cross-entropy label smoothing, in [0, 1)"},
    {"--top_k", "task.top_k", kTask, "Also report top-k accuracy (default 5)"},
    {"--num_classes", "task.num_classes", kTask,
     "Classes or vocabulary size (default: from the data or model)"},
    {"--export_torchscript", "export.torchscript_path", kExport,
     "Absolute path where rank 0 writes the trained TorchScript model"},
    {"--export_safetensors", "export.safetensors_path", kExport,
     "Absolute path where rank 0 writes the trained parameters as "
     "safetensors"},
    {"--tensorboard_dir", "export.tensorboard_dir", kExport,
     "Absolute directory where rank 0 writes TensorBoard event files of "
     "the loss, learning rate, gradient norm, samples/s and evaluation "
     "metrics while the job runs (created if missing)"},
};

// Every JobSpec field has a flag today. A field added here instead of to
// kSpecFlags needs a reason a user would accept, e.g. a list of messages
// that a flag's value could not spell.
constexpr std::array<FileOnlyField, 0> kFileOnlyFields = {};

}  // namespace

absl::Span<const SpecFlag> SpecFlagTable() { return kSpecFlags; }

std::string FlagValueName(const SpecFlag& row, absl::string_view name) {
  for (absl::string_view pair :
       absl::StrSplit(row.spellings, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> spelling =
        absl::StrSplit(pair, '=');
    if (spelling.second == name) return std::string(spelling.first);
  }
  return std::string(name);
}

absl::Span<const FileOnlyField> FileOnlySpecFields() { return kFileOnlyFields; }

}  // namespace ringleader::cli
