#include "cli/spec_flags.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ringleader::cli {
namespace {

template <typename E>
using EnumNames = std::vector<std::pair<std::string, E>>;

const EnumNames<v1::ModelArch>& ModelNames() {
  static const auto* names =
      new EnumNames<v1::ModelArch>{{"mlp", v1::MODEL_ARCH_MLP},
                                   {"cnn", v1::MODEL_ARCH_CNN},
                                   {"torchscript", v1::MODEL_ARCH_TORCHSCRIPT}};
  return *names;
}

const EnumNames<v1::DatasetFormat>& DatasetNames() {
  static const auto* names = new EnumNames<v1::DatasetFormat>{
      {"idx", v1::DATASET_FORMAT_IDX},
      {"synthetic", v1::DATASET_FORMAT_SYNTHETIC},
      {"npy", v1::DATASET_FORMAT_NPY},
      {"tokens", v1::DATASET_FORMAT_TOKENS},
      {"image_folder", v1::DATASET_FORMAT_IMAGE_FOLDER},
      {"tar_shards", v1::DATASET_FORMAT_TAR_SHARDS}};
  return *names;
}

const EnumNames<v1::TokenDtype>& TokenDtypeNames() {
  static const auto* names = new EnumNames<v1::TokenDtype>{
      {"uint16", v1::TOKEN_DTYPE_UINT16}, {"uint32", v1::TOKEN_DTYPE_UINT32}};
  return *names;
}

const EnumNames<v1::TaskKind>& TaskNames() {
  static const auto* names = new EnumNames<v1::TaskKind>{
      {"classification", v1::TASK_KIND_CLASSIFICATION},
      {"language_model", v1::TASK_KIND_LANGUAGE_MODEL},
      {"regression", v1::TASK_KIND_REGRESSION}};
  return *names;
}

const EnumNames<v1::LossKind>& LossNames() {
  static const auto* names = new EnumNames<v1::LossKind>{
      {"cross_entropy", v1::LOSS_KIND_CROSS_ENTROPY},
      {"mse", v1::LOSS_KIND_MSE},
      {"l1", v1::LOSS_KIND_L1},
      {"model", v1::LOSS_KIND_MODEL}};
  return *names;
}

const EnumNames<v1::OptimizerKind>& OptimizerNames() {
  static const auto* names =
      new EnumNames<v1::OptimizerKind>{{"sgd", v1::OPTIMIZER_KIND_SGD},
                                       {"adam", v1::OPTIMIZER_KIND_ADAM},
                                       {"adamw", v1::OPTIMIZER_KIND_ADAMW}};
  return *names;
}

const EnumNames<v1::LrScheduleKind>& LrScheduleNames() {
  static const auto* names = new EnumNames<v1::LrScheduleKind>{
      {"constant", v1::LR_SCHEDULE_KIND_CONSTANT},
      {"step", v1::LR_SCHEDULE_KIND_STEP},
      {"cosine", v1::LR_SCHEDULE_KIND_COSINE},
      {"linear", v1::LR_SCHEDULE_KIND_LINEAR}};
  return *names;
}

const EnumNames<v1::DeviceKind>& DeviceNames() {
  static const auto* names = new EnumNames<v1::DeviceKind>{
      {"cpu", v1::DEVICE_KIND_CPU}, {"cuda", v1::DEVICE_KIND_CUDA}};
  return *names;
}

const EnumNames<v1::Precision>& PrecisionNames() {
  static const auto* names = new EnumNames<v1::Precision>{
      {"fp32", v1::PRECISION_FP32}, {"bf16", v1::PRECISION_BF16_MIXED}};
  return *names;
}

const EnumNames<v1::CpuTransport>& TransportNames() {
  static const auto* names =
      new EnumNames<v1::CpuTransport>{{"auto", v1::CPU_TRANSPORT_AUTO},
                                      {"gloo", v1::CPU_TRANSPORT_GLOO},
                                      {"shm", v1::CPU_TRANSPORT_SHM}};
  return *names;
}

const EnumNames<v1::GradientCompression>& CompressionNames() {
  static const auto* names = new EnumNames<v1::GradientCompression>{
      {"none", v1::GRADIENT_COMPRESSION_NONE},
      {"fp16", v1::GRADIENT_COMPRESSION_FP16},
      {"bf16", v1::GRADIENT_COMPRESSION_BF16}};
  return *names;
}

// CLI11 reads integers with base 0 ("010" is 8, "0x10" is 16) and unsigned
// ones through strtoull ("-1" is 2^64-1); a job flag means plain decimal.
CLI::Validator DecimalInteger(bool allow_sign) {
  return CLI::Validator(
      [allow_sign](std::string& value) -> std::string {
        const bool negative = allow_sign && absl::StartsWith(value, "-");
        std::string digits = value.substr(negative ? 1 : 0);
        bool ok = !digits.empty();
        for (char c : digits) ok = ok && absl::ascii_isdigit(c);
        if (!ok) {
          return allow_sign ? "must be a decimal integer"
                            : "must be a non-negative decimal integer";
        }
        // Leading zeros go, so "010" is read as ten, not as octal.
        const size_t first =
            std::min(digits.find_first_not_of('0'), digits.size() - 1);
        value = (negative ? "-" : "") + digits.substr(first);
        return "";
      },
      /*validator_desc=*/"");  // The type name says it: INT, UINT.
}

template <typename T>
CLI::Option* AddValue(CLI::App* cmd, const std::string& name,
                      std::optional<T>* out, const std::string& help) {
  CLI::Option* opt = cmd->add_option_function<T>(
      name, [out](const T& v) { *out = v; }, help);
  // The last of repeated flags wins, so a script can append an override.
  opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  if constexpr (std::is_integral_v<T>) {
    opt->transform(DecimalInteger(std::is_signed_v<T>));
  }
  return opt;
}

template <typename E>
CLI::Option* AddEnum(CLI::App* cmd, const std::string& name,
                     const EnumNames<E>& names, std::optional<E>* out,
                     const std::string& help) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : names) keys.push_back(key);
  std::map<std::string, E> by_name(names.begin(), names.end());
  return cmd
      ->add_option_function<std::string>(
          name,
          [by_name, out](const std::string& v) {
            // IsMember below has admitted only these names.
            *out = by_name.at(absl::AsciiStrToLower(v));
          },
          help)
      ->check(CLI::IsMember(keys, CLI::ignore_case))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// A comma-separated list that replaces the field's list (as --hidden does).
template <typename T>
CLI::Option* AddList(CLI::App* cmd, const std::string& name,
                     std::optional<std::vector<T>>* out,
                     const std::string& help) {
  return cmd
      ->add_option_function<std::vector<T>>(
          name, [out](const std::vector<T>& v) { *out = v; }, help)
      ->delimiter(',');
}

// "--flag" or "--flag=true|false"; a "!--no-flag" name sets false.
CLI::Option* AddBool(CLI::App* cmd, const std::string& names,
                     std::optional<bool>* out, const std::string& help) {
  return cmd
      ->add_flag_function(
          names, [out](int64_t count) { *out = count > 0; }, help)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// dataset.train/test/transform (--dataset=npy) and the token fields
// (--dataset=tokens).
void AddNpyAndTokenFlags(CLI::App* c, SpecOverrides* o,
                         const std::string& group) {
  AddList(c, "--train_inputs", &o->train_inputs,
          "Training .npy files, one per model input, comma separated "
          "(--dataset=npy)")
      ->group(group);
  AddValue(c, "--train_targets", &o->train_targets,
           "Training targets .npy (--dataset=npy)")
      ->group(group);
  AddList(c, "--test_inputs", &o->test_inputs,
          "Test .npy files, as many as --train_inputs (--dataset=npy)")
      ->group(group);
  AddValue(c, "--test_targets", &o->test_targets,
           "Test targets .npy (--dataset=npy)")
      ->group(group);
  AddValue(c, "--input_scale", &o->input_scale,
           "Multiply inputs by this, e.g. 0.00392156862745098 (1/255) for "
           "8-bit pixels (--dataset=npy)")
      ->group(group);
  AddList(c, "--input_mean", &o->input_mean,
          "Per-channel mean subtracted after scaling, comma separated")
      ->group(group);
  AddList(c, "--input_std", &o->input_std,
          "Per-channel std divided by, one per --input_mean")
      ->group(group);
  AddValue(c, "--train_tokens", &o->train_tokens,
           "Training token file, .bin or 1-D .npy (--dataset=tokens)")
      ->group(group);
  AddValue(c, "--test_tokens", &o->test_tokens,
           "Test token file (--dataset=tokens)")
      ->group(group);
  AddEnum(c, "--token_dtype", TokenDtypeNames(), &o->token_dtype,
          "uint16|uint32: element type of a .bin token file (default uint16)")
      ->group(group);
  AddValue(c, "--block_size", &o->block_size,
           "Tokens of context per sample (--dataset=tokens)")
      ->group(group);
}

// The image formats' fields (--dataset=image_folder|tar_shards) and the
// loader's.
void AddImageFlags(CLI::App* c, SpecOverrides* o, const std::string& group) {
  AddValue(
      c, "--train_root", &o->train_root,
      "Training ImageFolder root, ROOT/CLASS/IMAGE (--dataset=image_folder)")
      ->group(group);
  AddValue(c, "--test_root", &o->test_root,
           "Test ImageFolder root (--dataset=image_folder)")
      ->group(group);
  AddList(c, "--train_shards", &o->train_shards,
          "Training tar shards: paths or brace patterns such as "
          "/data/train-{000000..000099}.tar, comma separated "
          "(--dataset=tar_shards)")
      ->group(group);
  AddList(c, "--test_shards", &o->test_shards,
          "Test tar shards (--dataset=tar_shards)")
      ->group(group);
  AddValue(c, "--image_size", &o->image_size,
           "Side of the crop the model sees (default 224)")
      ->group(group);
  AddValue(c, "--resize_size", &o->resize_size,
           "Evaluation's Resize before CenterCrop (default size*256/224)")
      ->group(group);
  AddValue(c, "--min_scale", &o->min_scale,
           "RandomResizedCrop's smallest area fraction (default 0.08)")
      ->group(group);
  AddValue(c, "--max_scale", &o->max_scale,
           "RandomResizedCrop's largest area fraction (default 1)")
      ->group(group);
  AddValue(c, "--min_ratio", &o->min_ratio,
           "RandomResizedCrop's smallest aspect ratio (default 3/4)")
      ->group(group);
  AddValue(c, "--max_ratio", &o->max_ratio,
           "RandomResizedCrop's largest aspect ratio (default 4/3)")
      ->group(group);
  AddBool(c, "--no_random_crop", &o->no_random_crop,
          "Train on Resize + CenterCrop instead of RandomResizedCrop")
      ->group(group);
  AddBool(c, "--full_decode", &o->full_decode,
          "Decode every JPEG whole, never at a reduced scale")
      ->group(group);
  AddBool(c, "--skip_corrupt", &o->skip_corrupt,
          "Skip and count unreadable image files instead of failing the job")
      ->group(group);
  AddValue(c, "--loader_threads", &o->loader_threads,
           "Loader threads per rank (default: the host's CPUs / its ranks)")
      ->group(group);
  AddValue(c, "--prefetch_batches", &o->prefetch_batches,
           "Batches prepared ahead of the step (default 2; 4 for images)")
      ->group(group);
}

void ApplyImageOverrides(const SpecOverrides& o, v1::DatasetSpec* d) {
  auto replace = [](const auto& values, auto* list) {
    list->Clear();
    for (const auto& v : values) *list->Add() = v;
  };
  if (o.train_root) d->set_train_root(*o.train_root);
  if (o.test_root) d->set_test_root(*o.test_root);
  if (o.train_shards) replace(*o.train_shards, d->mutable_train_shards());
  if (o.test_shards) replace(*o.test_shards, d->mutable_test_shards());
  auto image = [d] { return d->mutable_image(); };
  if (o.image_size) image()->set_size(*o.image_size);
  if (o.resize_size) image()->set_resize_size(*o.resize_size);
  if (o.min_scale) image()->set_min_scale(*o.min_scale);
  if (o.max_scale) image()->set_max_scale(*o.max_scale);
  if (o.min_ratio) image()->set_min_ratio(*o.min_ratio);
  if (o.max_ratio) image()->set_max_ratio(*o.max_ratio);
  if (o.no_random_crop) image()->set_no_random_crop(*o.no_random_crop);
  if (o.full_decode) image()->set_full_decode(*o.full_decode);
  if (o.skip_corrupt) d->set_skip_corrupt(*o.skip_corrupt);
  if (o.loader_threads) d->set_loader_threads(*o.loader_threads);
  if (o.prefetch_batches) d->set_prefetch_batches(*o.prefetch_batches);
}

// The optimizer's fields after weight_decay, the schedule and clipping.
void AddRecipeFlags(CLI::App* c, SpecOverrides* o, const std::string& group) {
  AddValue(c, "--beta1", &o->beta1,
           "Adam/AdamW first-moment decay, in [0, 1) (default 0.9)")
      ->group(group);
  AddValue(c, "--beta2", &o->beta2,
           "Adam/AdamW second-moment decay, in [0, 1) (default 0.999)")
      ->group(group);
  AddValue(c, "--eps", &o->eps, "Adam/AdamW eps, > 0 (default 1e-8)")
      ->group(group);
  AddBool(c, "--nesterov", &o->nesterov, "SGD with Nesterov momentum")
      ->group(group);
  AddBool(c, "--no_decay_bias_and_norm", &o->no_decay_bias_and_norm,
          "No weight decay for parameters of < 2 dimensions (biases, norms)")
      ->group(group);
  AddEnum(c, "--lr_schedule", LrScheduleNames(), &o->lr_schedule,
          "constant|step|cosine|linear (default constant)")
      ->group(group);
  AddValue(c, "--warmup_steps", &o->warmup_steps,
           "Linear warmup over this many optimizer steps (default 0)")
      ->group(group);
  AddValue(c, "--min_lr", &o->min_lr,
           "Learning-rate floor of step, cosine and linear (default 0)")
      ->group(group);
  AddValue(c, "--decay_steps", &o->decay_steps,
           "Cosine/linear decay horizon in optimizer steps (default: the "
           "job's planned steps)")
      ->group(group);
  AddValue(c, "--lr_step_size", &o->lr_step_size,
           "Step schedule: decay every N optimizer steps")
      ->group(group);
  AddValue(c, "--lr_gamma", &o->lr_gamma,
           "Step schedule: decay factor, in (0, 1) (default 0.1)")
      ->group(group);
  AddValue(c, "--clip_grad_norm", &o->clip_grad_norm,
           "Clip gradients to this global L2 norm (default 0: off)")
      ->group(group);
}

void ApplyRecipeOverrides(const SpecOverrides& o, v1::JobSpec* spec) {
  auto opt = [spec] { return spec->mutable_optimizer(); };
  auto lr = [spec] { return spec->mutable_lr_schedule(); };
  if (o.beta1) opt()->set_beta1(*o.beta1);
  if (o.beta2) opt()->set_beta2(*o.beta2);
  if (o.eps) opt()->set_eps(*o.eps);
  if (o.nesterov) opt()->set_nesterov(*o.nesterov);
  if (o.no_decay_bias_and_norm) {
    opt()->set_no_decay_bias_and_norm(*o.no_decay_bias_and_norm);
  }
  if (o.lr_schedule) lr()->set_kind(*o.lr_schedule);
  if (o.warmup_steps) lr()->set_warmup_steps(*o.warmup_steps);
  if (o.min_lr) lr()->set_min_lr(*o.min_lr);
  if (o.decay_steps) lr()->set_decay_steps(*o.decay_steps);
  if (o.lr_step_size) lr()->set_step_size(*o.lr_step_size);
  if (o.lr_gamma) lr()->set_gamma(*o.lr_gamma);
  if (o.clip_grad_norm) spec->set_clip_grad_norm(*o.clip_grad_norm);
}

void AddTaskAndExportFlags(CLI::App* c, SpecOverrides* o) {
  const std::string g_task = "Task";
  AddEnum(c, "--task", TaskNames(), &o->task,
          "classification|language_model|regression (default "
          "classification)")
      ->group(g_task);
  AddEnum(c, "--loss", LossNames(), &o->loss,
          "cross_entropy|mse|l1|model (default: the task's; model: the "
          "TorchScript model returns it)")
      ->group(g_task);
  AddValue(c, "--ignore_index", &o->ignore_index,
           "Target value cross-entropy and the metrics skip (default -100)")
      ->group(g_task);
  AddValue(c, "--label_smoothing", &o->label_smoothing,
           "Cross-entropy label smoothing, in [0, 1)")
      ->group(g_task);
  AddValue(c, "--top_k", &o->top_k, "Also report top-k accuracy (default 5)")
      ->group(g_task);
  AddValue(c, "--num_classes", &o->num_classes,
           "Classes or vocabulary size (default: from the data or model)")
      ->group(g_task);
  const std::string g_export = "Export";
  AddValue(c, "--export_torchscript", &o->export_torchscript,
           "Absolute path where rank 0 writes the trained TorchScript model")
      ->group(g_export);
  AddValue(c, "--export_safetensors", &o->export_safetensors,
           "Absolute path where rank 0 writes the trained parameters as "
           "safetensors")
      ->group(g_export);
}

// dataset fields of --dataset=npy and --dataset=tokens.
void ApplyNpyAndTokenOverrides(const SpecOverrides& o, v1::DatasetSpec* d) {
  auto replace = [](const auto& values, auto* list) {
    list->Clear();
    for (const auto& v : values) *list->Add() = v;
  };
  if (o.train_inputs) {
    replace(*o.train_inputs, d->mutable_train()->mutable_inputs());
  }
  if (o.train_targets) d->mutable_train()->set_targets(*o.train_targets);
  if (o.test_inputs) {
    replace(*o.test_inputs, d->mutable_test()->mutable_inputs());
  }
  if (o.test_targets) d->mutable_test()->set_targets(*o.test_targets);
  if (o.input_scale) d->mutable_transform()->set_scale(*o.input_scale);
  if (o.input_mean) {
    replace(*o.input_mean, d->mutable_transform()->mutable_mean());
  }
  if (o.input_std) replace(*o.input_std, d->mutable_transform()->mutable_std());
  if (o.train_tokens) d->set_train_tokens(*o.train_tokens);
  if (o.test_tokens) d->set_test_tokens(*o.test_tokens);
  if (o.token_dtype) d->set_token_dtype(*o.token_dtype);
  if (o.block_size) d->set_block_size(*o.block_size);
}

void ApplyTaskAndExportOverrides(const SpecOverrides& o, v1::JobSpec* spec) {
  auto task = [spec] { return spec->mutable_task(); };
  if (o.task) task()->set_kind(*o.task);
  if (o.loss) task()->set_loss(*o.loss);
  if (o.ignore_index) task()->set_ignore_index(*o.ignore_index);
  if (o.label_smoothing) task()->set_label_smoothing(*o.label_smoothing);
  if (o.top_k) task()->set_top_k(*o.top_k);
  if (o.num_classes) task()->set_num_classes(*o.num_classes);
  if (o.export_torchscript) {
    spec->mutable_export_()->set_torchscript_path(*o.export_torchscript);
  }
  if (o.export_safetensors) {
    spec->mutable_export_()->set_safetensors_path(*o.export_safetensors);
  }
}

}  // namespace

void AddSpecFlags(CLI::App* c, SpecOverrides* o) {
  const std::string g_model = "Model";
  const std::string g_data = "Dataset";
  const std::string g_opt = "Optimizer";
  const std::string g_train = "Training";
  const std::string g_elastic = "Workers";
  AddValue(c, "--name", &o->name, "Job name, [a-z0-9-], 1..63 characters")
      ->group(g_train);
  AddEnum(c, "--model", ModelNames(), &o->model, "mlp|cnn|torchscript")
      ->group(g_model);
  AddValue(c, "--torchscript_path", &o->torchscript_path,
           "The .pt file on every worker (--model=torchscript)")
      ->group(g_model);
  c->add_option_function<std::vector<int32_t>>(
       "--hidden", [o](const std::vector<int32_t>& v) { o->hidden = v; },
       "MLP hidden widths, comma separated (default 256,128)")
      ->delimiter(',')
      ->transform(DecimalInteger(true))
      ->group(g_model);
  AddEnum(c, "--dataset", DatasetNames(), &o->dataset,
          "idx|synthetic|npy|tokens")
      ->group(g_data);
  AddValue(c, "--data_path", &o->data_path,
           "Directory with the IDX files (--dataset=idx)")
      ->group(g_data);
  AddValue(c, "--train_size", &o->train_size,
           "Synthetic training samples (--dataset=synthetic)")
      ->group(g_data);
  AddValue(c, "--test_size", &o->test_size,
           "Synthetic test samples (--dataset=synthetic)")
      ->group(g_data);
  AddBool(c, "--shuffle,!--no-shuffle", &o->shuffle,
          "Shuffle every epoch (seed + epoch)")
      ->group(g_data);
  AddBool(c, "--drop_last", &o->drop_last,
          "Drop the tail that does not divide by the world size")
      ->group(g_data);
  AddValue(c, "--random_crop_padding", &o->random_crop_padding,
           "Augment training images: pad by N, crop back at a random offset "
           "(default 0: off)")
      ->group(g_data);
  AddBool(c, "--horizontal_flip", &o->horizontal_flip,
          "Augment training images: mirror left-right with probability 1/2")
      ->group(g_data);
  AddNpyAndTokenFlags(c, o, g_data);
  AddImageFlags(c, o, g_data);
  AddEnum(c, "--optimizer", OptimizerNames(), &o->optimizer, "sgd|adam|adamw")
      ->group(g_opt);
  AddValue(c, "--lr", &o->lr, "Learning rate, > 0")->group(g_opt);
  AddValue(c, "--momentum", &o->momentum, "SGD momentum, in [0, 1)")
      ->group(g_opt);
  AddValue(c, "--weight_decay", &o->weight_decay, "Weight decay, in [0, 1]")
      ->group(g_opt);
  AddRecipeFlags(c, o, g_opt);
  AddValue(c, "--epochs", &o->epochs, "Epochs to train")->group(g_train);
  AddValue(c, "--batch_size", &o->batch_size, "Per-rank batch size")
      ->group(g_train);
  AddValue(c, "--seed", &o->seed, "Seed of the shuffle and the model init")
      ->group(g_train);
  AddValue(c, "--grad_accum", &o->grad_accum,
           "Micro-steps accumulated per optimizer step (default 1)")
      ->group(g_train);
  AddEnum(c, "--device", DeviceNames(), &o->device, "cpu|cuda (default cpu)")
      ->group(g_train);
  AddEnum(c, "--precision", PrecisionNames(), &o->precision,
          "fp32|bf16: bf16 is mixed precision as torch.autocast (default "
          "fp32)")
      ->group(g_train);
  AddValue(c, "--progress_every", &o->progress_every,
           "Report progress every N steps (default 10)")
      ->group(g_train);
  AddValue(c, "--progress_interval_ms", &o->progress_interval_ms,
           "Report progress at most once per this many ms (default 100)")
      ->group(g_train);
  AddValue(c, "--checkpoint_dir", &o->checkpoint_dir,
           "Absolute directory for checkpoints; empty disables them")
      ->group(g_train);
  AddValue(c, "--checkpoint_every", &o->checkpoint_every,
           "Checkpoint every K steps (0: at epoch end)")
      ->group(g_train);
  AddBool(c, "--checkpoint_synchronous", &o->checkpoint_synchronous,
          "Write checkpoints on the training thread, not in the background "
          "(slower; for a host where the state's extra copy does not fit)")
      ->group(g_train);
  AddBool(c, "--evaluate_every_epoch", &o->evaluate_every_epoch,
          "Evaluate on the test split after every epoch, not only the last")
      ->group(g_train);
  AddBool(c, "--resume", &o->resume,
          "Continue from the last checkpoint of a job of this name")
      ->group(g_train);
  CLI::Option* min =
      AddValue(c, "--min_workers", &o->min_workers, "Fewest workers to start")
          ->group(g_elastic);
  CLI::Option* max =
      AddValue(c, "--max_workers", &o->max_workers, "Most workers to take")
          ->group(g_elastic);
  // --workers=N is shorthand for a fixed world size.
  c->add_option_function<int32_t>(
       "--workers",
       [o](int32_t n) {
         o->min_workers = n;
         o->max_workers = n;
       },
       "Exactly N workers (sets --min_workers and --max_workers)")
      ->transform(DecimalInteger(true))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->excludes(min)
      ->excludes(max)
      ->group(g_elastic);
  AddValue(c, "--max_restarts", &o->max_restarts,
           "Restarts allowed for the whole job")
      ->group(g_elastic);
  AddValue(c, "--last_call_ms", &o->last_call_ms,
           "After min_workers joined, wait this long for more (default 1000)")
      ->group(g_elastic);
  AddValue(c, "--rendezvous_timeout_ms", &o->rendezvous_timeout_ms,
           "Fail if min_workers do not join in time (default 600000)")
      ->group(g_elastic);
  const std::string g_ddp = "DDP";
  AddValue(c, "--bucket_cap_bytes", &o->bucket_cap_bytes,
           "Gradient bucket size cap (default 25 MiB)")
      ->group(g_ddp);
  AddValue(c, "--first_bucket_bytes", &o->first_bucket_bytes,
           "First gradient bucket size (default 1 MiB)")
      ->group(g_ddp);
  AddBool(c, "--allreduce_after_backward", &o->allreduce_after_backward,
          "All-reduce after backward instead of overlapping (slower)")
      ->group(g_ddp);
  AddBool(c, "--communicate_alone", &o->communicate_alone,
          "All-reduce gradient buckets even at world size 1 (as PyTorch "
          "DDP does; one GPU then exercises the NCCL path)")
      ->group(g_ddp);
  AddEnum(c, "--cpu_transport", TransportNames(), &o->cpu_transport,
          "auto|gloo|shm: how CPU ranks all-reduce (default auto: shared "
          "memory when all ranks are on one host)")
      ->group(g_ddp);
  AddEnum(c, "--gradient_compression", CompressionNames(),
          &o->gradient_compression,
          "none|fp16|bf16: all-reduce gradient buckets in a 16-bit float "
          "(half the bytes; default none)")
      ->group(g_ddp);
  AddValue(c, "--buckets_in_flight", &o->buckets_in_flight,
           "Gloo: gradient all-reduces in flight at once, 1..8 (default 2)")
      ->group(g_ddp);
  const std::string g_timeline = "Timeline";
  AddValue(c, "--timeline_dir", &o->timeline_dir,
           "Absolute directory where each rank writes "
           "<job>-rank<R>.trace.json (Chrome trace format)")
      ->group(g_timeline);
  AddValue(c, "--timeline_steps", &o->timeline_steps,
           "Optimizer steps recorded per rank (default 200)")
      ->group(g_timeline);
  AddTaskAndExportFlags(c, o);
}

void ApplySpecOverrides(const SpecOverrides& o, v1::JobSpec* spec) {
  // Sub-messages are touched only for flags given, so an override leaves no
  // empty messages behind.
  auto model = [spec] { return spec->mutable_model(); };
  auto data = [spec] { return spec->mutable_dataset(); };
  auto opt = [spec] { return spec->mutable_optimizer(); };
  if (o.name) spec->set_name(*o.name);
  if (o.model) model()->set_arch(*o.model);
  if (o.torchscript_path) model()->set_torchscript_path(*o.torchscript_path);
  if (o.hidden) {
    model()->clear_hidden_sizes();
    for (int32_t h : *o.hidden) model()->add_hidden_sizes(h);
  }
  if (o.dataset) data()->set_format(*o.dataset);
  if (o.data_path) data()->set_path(*o.data_path);
  if (o.train_size) data()->set_synthetic_train_size(*o.train_size);
  if (o.test_size) data()->set_synthetic_test_size(*o.test_size);
  if (o.shuffle) data()->set_shuffle(*o.shuffle);
  if (o.drop_last) data()->set_drop_last(*o.drop_last);
  if (o.random_crop_padding) {
    data()->mutable_augmentation()->set_random_crop_padding(
        *o.random_crop_padding);
  }
  if (o.horizontal_flip) {
    data()->mutable_augmentation()->set_horizontal_flip(*o.horizontal_flip);
  }
  if (o.train_inputs || o.train_targets || o.test_inputs || o.test_targets ||
      o.input_scale || o.input_mean || o.input_std || o.train_tokens ||
      o.test_tokens || o.token_dtype || o.block_size) {
    ApplyNpyAndTokenOverrides(o, data());
  }
  if (o.train_root || o.test_root || o.train_shards || o.test_shards ||
      o.image_size || o.resize_size || o.min_scale || o.max_scale ||
      o.min_ratio || o.max_ratio || o.no_random_crop || o.full_decode ||
      o.skip_corrupt || o.loader_threads || o.prefetch_batches) {
    ApplyImageOverrides(o, data());
  }
  if (o.optimizer) opt()->set_kind(*o.optimizer);
  if (o.lr) opt()->set_learning_rate(*o.lr);
  if (o.momentum) opt()->set_momentum(*o.momentum);
  if (o.weight_decay) opt()->set_weight_decay(*o.weight_decay);
  if (o.epochs) spec->set_epochs(*o.epochs);
  if (o.batch_size) spec->set_batch_size(*o.batch_size);
  if (o.min_workers) spec->set_min_workers(*o.min_workers);
  if (o.max_workers) spec->set_max_workers(*o.max_workers);
  if (o.seed) spec->set_seed(*o.seed);
  if (o.checkpoint_dir) spec->set_checkpoint_dir(*o.checkpoint_dir);
  if (o.checkpoint_every) spec->set_checkpoint_every_steps(*o.checkpoint_every);
  if (o.checkpoint_synchronous) {
    spec->set_checkpoint_synchronous(*o.checkpoint_synchronous);
  }
  if (o.progress_every) spec->set_progress_every_steps(*o.progress_every);
  if (o.progress_interval_ms) {
    spec->set_progress_min_interval_ms(*o.progress_interval_ms);
  }
  if (o.max_restarts) spec->set_max_restarts(*o.max_restarts);
  if (o.device) spec->set_device(*o.device);
  if (o.precision) spec->set_precision(*o.precision);
  if (o.last_call_ms) spec->set_rendezvous_last_call_ms(*o.last_call_ms);
  if (o.rendezvous_timeout_ms) {
    spec->set_rendezvous_timeout_ms(*o.rendezvous_timeout_ms);
  }
  if (o.resume) spec->set_resume(*o.resume);
  if (o.grad_accum) spec->set_gradient_accumulation_steps(*o.grad_accum);
  if (o.bucket_cap_bytes) {
    spec->mutable_ddp()->set_bucket_cap_bytes(*o.bucket_cap_bytes);
  }
  if (o.first_bucket_bytes) {
    spec->mutable_ddp()->set_first_bucket_bytes(*o.first_bucket_bytes);
  }
  if (o.allreduce_after_backward) {
    spec->mutable_ddp()->set_allreduce_after_backward(
        *o.allreduce_after_backward);
  }
  if (o.communicate_alone) {
    spec->mutable_ddp()->set_communicate_alone(*o.communicate_alone);
  }
  if (o.cpu_transport) spec->mutable_ddp()->set_cpu_transport(*o.cpu_transport);
  if (o.gradient_compression) {
    spec->mutable_ddp()->set_gradient_compression(*o.gradient_compression);
  }
  if (o.buckets_in_flight) {
    spec->mutable_ddp()->set_buckets_in_flight(*o.buckets_in_flight);
  }
  if (o.evaluate_every_epoch) {
    spec->set_evaluate_every_epoch(*o.evaluate_every_epoch);
  }
  if (o.timeline_dir) spec->set_timeline_dir(*o.timeline_dir);
  if (o.timeline_steps) spec->set_timeline_steps(*o.timeline_steps);
  ApplyTaskAndExportOverrides(o, spec);
  ApplyRecipeOverrides(o, spec);
}

std::string FlagForField(absl::string_view field_path) {
  static const auto* flags = new std::map<std::string, std::string>{
      {"name", "--name"},
      {"model.arch", "--model"},
      {"model.hidden_sizes", "--hidden"},
      {"model.torchscript_path", "--torchscript_path"},
      {"dataset.format", "--dataset"},
      {"dataset.path", "--data_path"},
      {"dataset.synthetic_train_size", "--train_size"},
      {"dataset.synthetic_test_size", "--test_size"},
      {"dataset.shuffle", "--shuffle"},
      {"dataset.drop_last", "--drop_last"},
      {"dataset.augmentation.random_crop_padding", "--random_crop_padding"},
      {"dataset.augmentation.horizontal_flip", "--horizontal_flip"},
      {"optimizer.kind", "--optimizer"},
      {"optimizer.learning_rate", "--lr"},
      {"optimizer.momentum", "--momentum"},
      {"optimizer.weight_decay", "--weight_decay"},
      {"optimizer.beta1", "--beta1"},
      {"optimizer.beta2", "--beta2"},
      {"optimizer.eps", "--eps"},
      {"optimizer.nesterov", "--nesterov"},
      {"optimizer.no_decay_bias_and_norm", "--no_decay_bias_and_norm"},
      {"lr_schedule.kind", "--lr_schedule"},
      {"lr_schedule.warmup_steps", "--warmup_steps"},
      {"lr_schedule.min_lr", "--min_lr"},
      {"lr_schedule.decay_steps", "--decay_steps"},
      {"lr_schedule.step_size", "--lr_step_size"},
      {"lr_schedule.gamma", "--lr_gamma"},
      {"clip_grad_norm", "--clip_grad_norm"},
      {"epochs", "--epochs"},
      {"batch_size", "--batch_size"},
      {"min_workers", "--min_workers"},
      {"max_workers", "--max_workers"},
      {"seed", "--seed"},
      {"checkpoint_dir", "--checkpoint_dir"},
      {"checkpoint_every_steps", "--checkpoint_every"},
      {"checkpoint_synchronous", "--checkpoint_synchronous"},
      {"progress_every_steps", "--progress_every"},
      {"progress_min_interval_ms", "--progress_interval_ms"},
      {"max_restarts", "--max_restarts"},
      {"device", "--device"},
      {"precision", "--precision"},
      {"rendezvous_last_call_ms", "--last_call_ms"},
      {"rendezvous_timeout_ms", "--rendezvous_timeout_ms"},
      {"resume", "--resume"},
      {"gradient_accumulation_steps", "--grad_accum"},
      {"ddp.bucket_cap_bytes", "--bucket_cap_bytes"},
      {"ddp.first_bucket_bytes", "--first_bucket_bytes"},
      {"ddp.allreduce_after_backward", "--allreduce_after_backward"},
      {"ddp.communicate_alone", "--communicate_alone"},
      {"ddp.cpu_transport", "--cpu_transport"},
      {"ddp.gradient_compression", "--gradient_compression"},
      {"ddp.buckets_in_flight", "--buckets_in_flight"},
      {"evaluate_every_epoch", "--evaluate_every_epoch"},
      {"timeline_dir", "--timeline_dir"},
      {"timeline_steps", "--timeline_steps"},
      // The validator names a whole split or the transform when it does
      // not belong to the format: the flag that starts it.
      {"dataset.train", "--train_inputs"},
      {"dataset.train.inputs", "--train_inputs"},
      {"dataset.train.targets", "--train_targets"},
      {"dataset.test", "--test_inputs"},
      {"dataset.test.inputs", "--test_inputs"},
      {"dataset.test.targets", "--test_targets"},
      {"dataset.transform", "--input_scale"},
      {"dataset.transform.scale", "--input_scale"},
      {"dataset.transform.mean", "--input_mean"},
      {"dataset.transform.std", "--input_std"},
      {"dataset.train_tokens", "--train_tokens"},
      {"dataset.test_tokens", "--test_tokens"},
      {"dataset.token_dtype", "--token_dtype"},
      {"dataset.block_size", "--block_size"},
      {"dataset.train_root", "--train_root"},
      {"dataset.test_root", "--test_root"},
      {"dataset.train_shards", "--train_shards"},
      {"dataset.test_shards", "--test_shards"},
      {"dataset.image", "--image_size"},
      {"dataset.image.size", "--image_size"},
      {"dataset.image.resize_size", "--resize_size"},
      {"dataset.image.min_scale", "--min_scale"},
      {"dataset.image.max_scale", "--max_scale"},
      {"dataset.image.min_ratio", "--min_ratio"},
      {"dataset.image.max_ratio", "--max_ratio"},
      {"dataset.image.no_random_crop", "--no_random_crop"},
      {"dataset.image.full_decode", "--full_decode"},
      // The validator names the scale and ratio ranges as pairs.
      {"dataset.image.min_scale/max_scale", "--min_scale"},
      {"dataset.image.min_ratio/max_ratio", "--min_ratio"},
      {"dataset.skip_corrupt", "--skip_corrupt"},
      {"dataset.loader_threads", "--loader_threads"},
      {"dataset.prefetch_batches", "--prefetch_batches"},
      {"task.kind", "--task"},
      {"task.loss", "--loss"},
      {"task.ignore_index", "--ignore_index"},
      {"task.label_smoothing", "--label_smoothing"},
      {"task.top_k", "--top_k"},
      {"task.num_classes", "--num_classes"},
      {"export.torchscript_path", "--export_torchscript"},
      {"export.safetensors_path", "--export_safetensors"},
  };
  // "model.hidden_sizes[3]" is set by the same flag as the whole list.
  absl::string_view path = field_path.substr(0, field_path.find('['));
  auto it = flags->find(std::string(path));
  return it == flags->end() ? "" : it->second;
}

namespace {

std::string LineWithFlagHint(absl::string_view line) {
  constexpr absl::string_view kPrefix = "invalid job spec: ";
  if (!absl::StartsWith(line, kPrefix)) return std::string(line);
  absl::string_view rest = line.substr(kPrefix.size());
  const std::string flag = FlagForField(rest.substr(0, rest.find(' ')));
  if (flag.empty()) return std::string(line);
  return absl::StrCat(line, " (flag ", flag, ")");
}

}  // namespace

std::string WithFlagHint(absl::string_view message) {
  // The validator lists every violation, one per line: each gets its hint.
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(message, '\n')) {
    lines.push_back(LineWithFlagHint(line));
  }
  return absl::StrJoin(lines, "\n");
}

}  // namespace ringleader::cli
