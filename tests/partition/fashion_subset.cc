#include "tests/partition/fashion_subset.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/data/idx_reader.h"

namespace ringleader::testing {
namespace {

void PutBigEndian(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

absl::Status WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  out.flush();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// The first `n` samples of `split` into dir/<prefix>-{images,labels}-...
absl::Status WriteSplit(const IdxDataset& data, int64_t n,
                        const std::string& dir, const std::string& prefix) {
  if (data.size() < n) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, " split has ", data.size(), " samples, fewer than ", n));
  }
  const int64_t pixels = data.images.rows * data.images.cols;
  std::string images;
  PutBigEndian(images, kIdxImagesMagic);
  PutBigEndian(images, static_cast<uint32_t>(n));
  PutBigEndian(images, static_cast<uint32_t>(data.images.rows));
  PutBigEndian(images, static_cast<uint32_t>(data.images.cols));
  images.append(reinterpret_cast<const char*>(data.images.pixels.data()),
                n * pixels);
  std::string labels;
  PutBigEndian(labels, kIdxLabelsMagic);
  PutBigEndian(labels, static_cast<uint32_t>(n));
  labels.append(reinterpret_cast<const char*>(data.labels.data()), n);
  if (absl::Status s = WriteFile(
          absl::StrCat(dir, "/", prefix, "-images-idx3-ubyte"), images);
      !s.ok()) {
    return s;
  }
  return WriteFile(absl::StrCat(dir, "/", prefix, "-labels-idx1-ubyte"),
                   labels);
}

}  // namespace

absl::StatusOr<std::string> WriteIdxSubset(const std::string& source,
                                           const std::string& dir,
                                           int64_t train, int64_t test) {
  std::filesystem::create_directories(dir);
  for (const auto& [split, n, prefix] :
       {std::tuple{Split::kTrain, train, "train"},
        std::tuple{Split::kTest, test, "t10k"}}) {
    absl::StatusOr<IdxDataset> data = LoadIdxSplit(source, split);
    if (!data.ok()) return data.status();
    if (absl::Status s = WriteSplit(*data, n, dir, prefix); !s.ok()) return s;
  }
  return dir;
}

}  // namespace ringleader::testing
