#include "worker/data/token_dataset.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/data/dataset.h"
#include "worker/data/mapped_file.h"
#include "worker/data/npy_convert.h"
#include "worker/data/npy_header.h"

namespace ringleader {
namespace {

// Larger windows are no language model's context; the bound also keeps
// every position computed here far from overflow.
constexpr int64_t kMaxBlockSize = int64_t{1} << 30;

const char* SplitName(Split split) {
  return split == Split::kTrain ? "train" : "test";
}

// Where the tokens are in the mapping, of what type, how many.
struct TokenSpan {
  const uint8_t* tokens = nullptr;
  NpyDtype dtype = NpyDtype::kUint16;
  int64_t count = 0;
};

absl::StatusOr<TokenSpan> NpyTokens(const MappedFile& file) {
  absl::StatusOr<NpyHeader> header =
      ParseNpyHeader(file.data(), file.size(), file.path());
  if (!header.ok()) return header.status();
  if (header->shape.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.path(), ": a token .npy must be 1-D (one stream of ids), got ",
        header->shape.size(), " dimensions [",
        absl::StrJoin(header->shape, ", "), "]"));
  }
  const NpyDtype d = header->dtype;
  if (d != NpyDtype::kUint16 && d != NpyDtype::kInt32 &&
      d != NpyDtype::kUint32 && d != NpyDtype::kInt64) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.path(), ": token ids must be uint16, int32, uint32 ",
                     "or int64, got ", NpyDtypeName(d)));
  }
  return TokenSpan{file.data() + header->data_offset, d, header->shape[0]};
}

absl::StatusOr<TokenSpan> RawTokens(const MappedFile& file, NpyDtype dtype) {
  if (dtype != NpyDtype::kUint16 && dtype != NpyDtype::kUint32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "raw token files hold uint16 or uint32, not ", NpyDtypeName(dtype)));
  }
  // A .npy under another name would otherwise train on its header's bytes.
  if (file.size() >= 6 && std::memcmp(file.data(), "\x93NUMPY", 6) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.path(), ": starts like a .npy file (\\x93NUMPY) but would be ",
        "read as raw tokens: name it *.npy"));
  }
  const size_t width = NpyDtypeSize(dtype);
  if (file.size() % width != 0) {
    return absl::DataLossError(absl::StrCat(
        file.path(), ": ", file.size(), " bytes is not a whole number of ",
        NpyDtypeName(dtype), " tokens (", width, " bytes each): truncated?"));
  }
  return TokenSpan{file.data(), dtype,
                   static_cast<int64_t>(file.size() / width)};
}

bool IsSigned(NpyDtype dtype) {
  return dtype == NpyDtype::kInt32 || dtype == NpyDtype::kInt64;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TokenDataset>> TokenDataset::Create(
    Split split, const std::string& path, int64_t block_size,
    NpyDtype raw_dtype) {
  const auto in_split = [split](const absl::Status& s) {
    return absl::Status(
        s.code(), absl::StrCat(SplitName(split), " split: ", s.message()));
  };
  if (block_size < 1 || block_size > kMaxBlockSize) {
    return in_split(absl::InvalidArgumentError(absl::StrCat(
        "block_size must be in [1, ", kMaxBlockSize, "], got ", block_size)));
  }
  absl::StatusOr<MappedFile> file = MappedFile::Open(path);
  if (!file.ok()) return in_split(file.status());
  absl::StatusOr<TokenSpan> span = absl::EndsWithIgnoreCase(path, ".npy")
                                       ? NpyTokens(*file)
                                       : RawTokens(*file, raw_dtype);
  if (!span.ok()) return in_split(span.status());
  if (split == Split::kTrain && span->count <= block_size) {
    return in_split(absl::InvalidArgumentError(absl::StrCat(
        path, ": ", span->count, " tokens make no window: one window of ",
        "block_size ", block_size, " needs at least ", block_size + 1,
        " tokens")));
  }
  return std::unique_ptr<TokenDataset>(new TokenDataset(
      *std::move(file), span->tokens, span->dtype, span->count, block_size,
      absl::StrCat(SplitName(split), " split of ", path)));
}

TokenDataset::TokenDataset(MappedFile file, const uint8_t* tokens,
                           NpyDtype dtype, int64_t num_tokens,
                           int64_t block_size, std::string description)
    : file_(std::move(file)),
      tokens_(tokens),
      dtype_(dtype),
      num_tokens_(num_tokens),
      block_size_(block_size),
      windows_(num_tokens >= 1 ? (num_tokens - 1) / block_size : 0),
      description_(std::move(description)) {}

std::vector<FieldShape> TokenDataset::input_fields() const {
  return {FieldShape{ElementType::kInt64, {block_size_}}};
}

FieldShape TokenDataset::target_field() const {
  return FieldShape{ElementType::kInt64, {block_size_}};
}

absl::Status TokenDataset::GatherFields(const int64_t* indices, size_t n,
                                        const std::vector<void*>& inputs_out,
                                        void* targets_out) const {
  if (inputs_out.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        description_, " has one input per sample, not ", inputs_out.size()));
  }
  if (absl::Status s = CheckIndices(indices, n, windows_); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat(description_, ": ", s.message()));
  }
  const int64_t b = block_size_;
  const size_t width = NpyDtypeSize(dtype_);
  const int64_t vocab = vocabulary_limit();
  for (size_t i = 0; i < n; ++i) {
    const int64_t first = indices[i] * b;  // The window's first token.
    const uint8_t* src = tokens_ + static_cast<size_t>(first) * width;
    int64_t* x = static_cast<int64_t*>(inputs_out[0]) + i * b;
    int64_t* y = static_cast<int64_t*>(targets_out) + i * b;
    ConvertToInt64(dtype_, src, static_cast<size_t>(b), x);
    // The target is the input shifted by one, plus the window's last token.
    std::memcpy(y, x + 1, static_cast<size_t>(b - 1) * sizeof(int64_t));
    ConvertToInt64(dtype_, src + static_cast<size_t>(b) * width, 1, y + b - 1);
    if (!IsSigned(dtype_) && vocab <= 0) continue;
    if (absl::Status s = CheckIds(indices[i], x, b, first, vocab); !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckIds(indices[i], y + b - 1, 1, first + b, vocab);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// ids[0, count) are tokens first_token... of the file; each must be >= 0
// and, with a limit (vocab_size > 0), below it.
absl::Status TokenDataset::CheckIds(int64_t window, const int64_t* ids,
                                    int64_t count, int64_t first_token,
                                    int64_t vocab_size) const {
  // Negative ids are 2^63 and up as unsigned, past either bound.
  const uint64_t bound = vocab_size > 0 ? static_cast<uint64_t>(vocab_size)
                                        : static_cast<uint64_t>(INT64_MAX) + 1;
  int64_t j = 0;
  // One comparison per id.
  while (j < count && static_cast<uint64_t>(ids[j]) < bound) ++j;
  if (j == count) return absl::OkStatus();
  if (ids[j] < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(description_, ": token ", first_token + j, " (in window ",
                     window, ") is ", ids[j], "; token ids must be >= 0"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      description_, ": token id ", ids[j], " at position ", first_token + j,
      " is >= the model's vocabulary size ", vocab_size));
}

}  // namespace ringleader
