#ifndef RINGLEADER_WORKER_DATA_TOKEN_DATASET_H_
#define RINGLEADER_WORKER_DATA_TOKEN_DATASET_H_

// One split of a token-stream dataset (DATASET_FORMAT_TOKENS in
// proto/ringleader/v1/job.proto): a flat file of N token ids, memory-mapped,
// cut into windows of block_size + 1 tokens. Window w starts at token
// w * block_size; its input is tokens [w*B, w*B + B) and its target the same
// shifted by one, [w*B + 1, w*B + B + 1). Consecutive windows share one
// token, so every token but the first is a target exactly once, and there
// are (N - 1) / B windows (the tail that does not fill a window is unused).
//
// The file is a 1-D .npy (uint16, int32, uint32 or int64: the name ends in
// .npy) or anything else read as raw little-endian tokens of a given type
// (uint16 or uint32, nanoGPT's and Megatron's .bin).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/data/dataset.h"
#include "worker/data/mapped_file.h"
#include "worker/data/npy_header.h"

namespace ringleader {

// Immutable after Create but for the vocabulary limit, which is atomic;
// thread-safe.
class TokenDataset final : public Dataset {
 public:
  // `raw_dtype` (kUint16 or kUint32) is the element type of a raw file; a
  // .npy says its own. Errors start with the split and name the file:
  // MappedFile's and ParseNpyHeader's; DataLoss for a raw file whose size
  // is not a whole number of tokens; InvalidArgument for block_size < 1, a
  // .npy not 1-D or of another dtype, a raw file that starts with the .npy
  // magic (misnamed), or a train split without a single window (it needs
  // block_size + 1 tokens). A test split may have no window.
  static absl::StatusOr<std::unique_ptr<TokenDataset>> Create(
      Split split, const std::string& path, int64_t block_size,
      NpyDtype raw_dtype = NpyDtype::kUint16);

  // Windows.
  int64_t size() const override { return windows_; }
  // int64 [block_size], one input.
  std::vector<FieldShape> input_fields() const override;
  // int64 [block_size].
  FieldShape target_field() const override;
  // 0: unknown. The vocabulary would take a scan of the whole file, which
  // may be larger than RAM; the job spec or the model says it.
  int64_t num_classes() const override { return 0; }
  // "train split of /data/train.bin".
  std::string Describe() const override { return description_; }
  // Also InvalidArgument when a window holds a negative id (int32 and int64
  // files), or one at or past the vocabulary limit, naming the file and the
  // token's position in it.
  absl::Status GatherFields(const int64_t* indices, size_t n,
                            const std::vector<void*>& inputs_out,
                            void* targets_out) const override;

  // Ids at or past `vocab_size` fail GatherFields from now on ("token id X
  // at position P is >= the model's vocabulary size V"), instead of failing
  // inside the model's embedding with a TorchScript traceback; 0 removes
  // the limit. The file may be larger than RAM, so it is checked window by
  // window as it is read, not scanned up front. The trainer sets it once it
  // knows the model (worker/train/step/token_vocabulary.h).
  void LimitVocabulary(int64_t vocab_size) {
    vocab_size_.store(vocab_size, std::memory_order_relaxed);
  }
  int64_t vocabulary_limit() const {
    return vocab_size_.load(std::memory_order_relaxed);
  }

  int64_t num_tokens() const { return num_tokens_; }
  int64_t block_size() const { return block_size_; }
  NpyDtype dtype() const { return dtype_; }

 private:
  TokenDataset(MappedFile file, const uint8_t* tokens, NpyDtype dtype,
               int64_t num_tokens, int64_t block_size, std::string description);
  absl::Status CheckIds(int64_t window, const int64_t* ids, int64_t count,
                        int64_t first_token, int64_t vocab_size) const;

  const MappedFile file_;
  const uint8_t* const tokens_;
  const NpyDtype dtype_;
  const int64_t num_tokens_;
  const int64_t block_size_;
  const int64_t windows_;
  const std::string description_;
  std::atomic<int64_t> vocab_size_{0};  // 0: no limit.
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_TOKEN_DATASET_H_
