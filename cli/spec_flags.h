#ifndef RINGLEADER_CLI_SPEC_FLAGS_H_
#define RINGLEADER_CLI_SPEC_FLAGS_H_

// `ringctl submit`'s job flags: every JobSpec field has one. A flag that is
// given overrides the field (of an empty spec, or of the spec read from
// --file); a flag that is not given leaves the field alone, so the file and
// WithDefaults keep the last word. Parsing the values (ranges of integer
// types, enum names) is CLI11's; the rules are the validator's.
//
// Pure apart from CLI11's registration; thread-compatible.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/string_view.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader::cli {

// The job flags given on the command line; nullopt: not given.
struct SpecOverrides {
  std::optional<std::string> name;
  std::optional<v1::ModelArch> model;
  std::optional<std::string> torchscript_path;
  std::optional<std::vector<int32_t>> hidden;
  std::optional<v1::DatasetFormat> dataset;
  std::optional<std::string> data_path;
  std::optional<int64_t> train_size;
  std::optional<int64_t> test_size;
  std::optional<bool> shuffle;
  std::optional<bool> drop_last;
  std::optional<int32_t> random_crop_padding;
  std::optional<bool> horizontal_flip;
  std::optional<std::vector<std::string>> train_inputs;
  std::optional<std::string> train_targets;
  std::optional<std::vector<std::string>> test_inputs;
  std::optional<std::string> test_targets;
  std::optional<double> input_scale;
  std::optional<std::vector<double>> input_mean;
  std::optional<std::vector<double>> input_std;
  std::optional<std::string> train_tokens;
  std::optional<std::string> test_tokens;
  std::optional<v1::TokenDtype> token_dtype;
  std::optional<int32_t> block_size;
  // The image formats' fields (--dataset=image_folder|tar_shards) and the
  // loader's.
  std::optional<std::string> train_root;
  std::optional<std::string> test_root;
  std::optional<std::vector<std::string>> train_shards;
  std::optional<std::vector<std::string>> test_shards;
  std::optional<int32_t> image_size;
  std::optional<int32_t> resize_size;
  std::optional<double> min_scale;
  std::optional<double> max_scale;
  std::optional<double> min_ratio;
  std::optional<double> max_ratio;
  std::optional<bool> no_random_crop;
  std::optional<bool> full_decode;
  std::optional<bool> skip_corrupt;
  std::optional<int32_t> loader_threads;
  std::optional<int32_t> prefetch_batches;
  std::optional<v1::OptimizerKind> optimizer;
  std::optional<double> lr;
  std::optional<double> momentum;
  std::optional<double> weight_decay;
  std::optional<double> beta1;
  std::optional<double> beta2;
  std::optional<double> eps;
  std::optional<bool> nesterov;
  std::optional<bool> no_decay_bias_and_norm;
  std::optional<v1::LrScheduleKind> lr_schedule;
  std::optional<int64_t> warmup_steps;
  std::optional<double> min_lr;
  std::optional<int64_t> decay_steps;
  std::optional<int64_t> lr_step_size;
  std::optional<double> lr_gamma;
  std::optional<double> clip_grad_norm;
  std::optional<int32_t> epochs;
  std::optional<int32_t> batch_size;
  std::optional<int32_t> min_workers;
  std::optional<int32_t> max_workers;
  std::optional<uint64_t> seed;
  std::optional<std::string> checkpoint_dir;
  std::optional<int32_t> checkpoint_every;
  std::optional<bool> checkpoint_synchronous;
  std::optional<int32_t> progress_every;
  std::optional<int32_t> progress_interval_ms;
  std::optional<int32_t> max_restarts;
  std::optional<v1::DeviceKind> device;
  std::optional<v1::Precision> precision;
  std::optional<int64_t> last_call_ms;
  std::optional<int64_t> rendezvous_timeout_ms;
  std::optional<bool> resume;
  std::optional<int32_t> grad_accum;
  std::optional<int64_t> bucket_cap_bytes;
  std::optional<int64_t> first_bucket_bytes;
  std::optional<bool> allreduce_after_backward;
  std::optional<bool> communicate_alone;
  std::optional<v1::CpuTransport> cpu_transport;
  std::optional<v1::GradientCompression> gradient_compression;
  std::optional<int32_t> buckets_in_flight;
  std::optional<bool> evaluate_every_epoch;
  std::optional<std::string> timeline_dir;
  std::optional<int32_t> timeline_steps;
  std::optional<v1::TaskKind> task;
  std::optional<v1::LossKind> loss;
  std::optional<int64_t> ignore_index;
  std::optional<double> label_smoothing;
  std::optional<int32_t> top_k;
  std::optional<int64_t> num_classes;
  std::optional<std::string> export_torchscript;
  std::optional<std::string> export_safetensors;
};

// Registers the job flags on `command`; parsing fills `*overrides`, which
// must outlive `command`. --workers=N sets min_workers and max_workers and
// excludes both flags. List flags (--hidden, --train_inputs, --input_mean,
// ...) take comma-separated values and replace the whole list.
void AddSpecFlags(CLI::App* command, SpecOverrides* overrides);

// Writes every given flag into `*spec`.
void ApplySpecOverrides(const SpecOverrides& overrides, v1::JobSpec* spec);

// The flag that sets a JobSpec field path ("optimizer.learning_rate" ->
// "--lr", "model.hidden_sizes[2]" -> "--hidden"); empty when none does.
std::string FlagForField(absl::string_view field_path);

// A validator message, one line per violation ("invalid job spec: <field>
// ..."), with the flag that sets each line's field appended to it:
// "... (flag --lr)". Other lines are unchanged.
std::string WithFlagHint(absl::string_view validator_message);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_SPEC_FLAGS_H_
