#include "worker/data/idx_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "worker/data/byte_reader.h"

namespace ringleader {
namespace {

// Payloads are read in pieces of this size so that a header claiming 2 GiB
// over a 100-byte file costs 16 MiB, not 2 GiB, before truncation shows.
constexpr size_t kReadChunk = size_t{16} << 20;
// How far past the payload to look for the end of a damaged gzip stream.
constexpr size_t kTrailingProbe = size_t{1} << 20;

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

std::string KindName(uint32_t magic) {
  switch (magic) {
    case kIdxImagesMagic:
      return "IDX image file";
    case kIdxLabelsMagic:
      return "IDX label file";
  }
  return "IDX file";
}

std::string DimsString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// Fills `out` completely unless the data ends first; returns the count read.
absl::StatusOr<size_t> ReadFully(ByteReader& reader, uint8_t* out, size_t n) {
  size_t total = 0;
  while (total < n) {
    absl::StatusOr<size_t> got = reader.Read(out + total, n - total);
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    total += *got;
  }
  return total;
}

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Reads the 4-byte header and checks that it is `magic`, saying what the
// file is instead when it is another IDX kind or element type.
absl::Status ReadMagic(ByteReader& reader, const std::string& path,
                       uint32_t magic) {
  const std::string kind = KindName(magic);
  uint8_t header[4];
  absl::StatusOr<size_t> got = ReadFully(reader, header, sizeof(header));
  if (!got.ok()) return got.status();
  if (*got < sizeof(header)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not an ", kind, ": ", *got, " bytes, too short for a header"));
  }
  const uint32_t found = BigEndian32(header);
  if (found != magic) {
    std::string hint;
    if (found == kIdxImagesMagic || found == kIdxLabelsMagic) {
      hint = absl::StrCat(" (it is an ", KindName(found), ")");
    } else if (header[0] == 0 && header[1] == 0 && header[2] != 0x08) {
      hint = absl::StrFormat(
          " (element type 0x%02x; only unsigned bytes, "
          "0x08, are supported)",
          header[2]);
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not an %s: magic 0x%08x, expected 0x%08x%s", path,
                        kind, found, magic, hint));
  }
  return absl::OkStatus();
}

// Reads the `ndims` dimension sizes into array->dims, checks each against
// min_dims, and returns the payload's size in bytes.
absl::StatusOr<uint64_t> ReadDims(ByteReader& reader, const std::string& path,
                                  size_t ndims,
                                  const std::vector<int64_t>& min_dims,
                                  IdxArray* array) {
  std::vector<uint8_t> raw_dims(4 * ndims);
  absl::StatusOr<size_t> got =
      ReadFully(reader, raw_dims.data(), raw_dims.size());
  if (!got.ok()) return got.status();
  if (*got < raw_dims.size()) {
    return absl::DataLossError(absl::StrCat(
        path, ": truncated: the header ends inside its dimension sizes"));
  }
  uint64_t bytes = 1;
  for (size_t i = 0; i < ndims; ++i) {
    array->dims.push_back(BigEndian32(&raw_dims[4 * i]));
  }
  for (size_t i = 0; i < ndims; ++i) {
    if (array->dims[i] < min_dims[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": dimension ", i, " of ", DimsString(array->dims),
                       " must be at least ", min_dims[i]));
    }
    // Each size is < 2^32, so the product exceeds the limit before it can
    // overflow 64 bits as long as we stop at the limit.
    bytes *= static_cast<uint64_t>(array->dims[i]);
    if (bytes > kMaxIdxPayloadBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": sizes ", DimsString(array->dims), " mean over ",
                       kMaxIdxPayloadBytes, " bytes, the largest supported"));
    }
  }
  return bytes;
}

// Reads exactly `bytes` of payload into array->data, in pieces, then checks
// that nothing follows it.
absl::Status ReadPayload(ByteReader& reader, const std::string& path,
                         uint64_t bytes, IdxArray* array) {
  absl::StatusOr<size_t> got;
  size_t have = 0;
  while (have < bytes) {
    const size_t want = std::min<size_t>(kReadChunk, bytes - have);
    array->data.resize(have + want);
    got = ReadFully(reader, array->data.data() + have, want);
    if (!got.ok()) return got.status();
    have += *got;
    if (*got < want) {
      return absl::DataLossError(absl::StrCat(
          path, ": truncated: sizes ", DimsString(array->dims), " need ", bytes,
          " bytes of data but the file holds ", have));
    }
  }
  // Any byte past the payload is an error. A little more is read than
  // needed: when a damaged gzip stream inflated into extra bytes, its checksum
  // failure (the real cause) shows within that bound and is reported instead.
  std::vector<uint8_t> extra(kTrailingProbe);
  got = ReadFully(reader, extra.data(), extra.size());
  if (!got.ok()) return got.status();
  if (*got != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": trailing bytes after the ", bytes,
        " bytes of data that sizes ", DimsString(array->dims), " describe"));
  }
  return absl::OkStatus();
}

// Reads a whole IDX file whose magic must be `magic` (which fixes the number
// of dimensions). `min_dims[i]` is the smallest size allowed for dimension i.
absl::StatusOr<IdxArray> ReadIdx(const std::string& path, uint32_t magic,
                                 const std::vector<int64_t>& min_dims) {
  absl::StatusOr<std::unique_ptr<ByteReader>> opened = OpenMaybeGzip(path);
  if (!opened.ok()) return opened.status();
  ByteReader& reader = **opened;
  if (absl::Status s = ReadMagic(reader, path, magic); !s.ok()) return s;
  IdxArray array;
  absl::StatusOr<uint64_t> bytes =
      ReadDims(reader, path, magic & 0xff, min_dims, &array);
  if (!bytes.ok()) return bytes.status();
  if (absl::Status s = ReadPayload(reader, path, *bytes, &array); !s.ok()) {
    return s;
  }
  return array;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The first of the split's candidate files that exists in `dir`.
absl::StatusOr<std::string> FindIdxFile(const std::string& dir, Split split,
                                        bool images) {
  const std::vector<std::string> names = IdxFileNames(split, images);
  for (const std::string& name : names) {
    const std::string path = absl::StrCat(dir, "/", name);
    if (IsRegularFile(path)) return path;
  }
  return absl::NotFoundError(
      absl::StrCat(dir, ": no ", split == Split::kTrain ? "training" : "test",
                   images ? " images" : " labels", " (looked for ",
                   absl::StrJoin(names, ", "), ")"));
}

}  // namespace

absl::StatusOr<IdxImages> ReadIdxImages(const std::string& path) {
  absl::StatusOr<IdxArray> array = ReadIdx(path, kIdxImagesMagic, {0, 1, 1});
  if (!array.ok()) return array.status();
  IdxImages images;
  images.count = array->dims[0];
  images.rows = array->dims[1];
  images.cols = array->dims[2];
  images.pixels = std::move(array->data);
  return images;
}

absl::StatusOr<std::vector<uint8_t>> ReadIdxLabels(const std::string& path) {
  absl::StatusOr<IdxArray> array = ReadIdx(path, kIdxLabelsMagic, {0});
  if (!array.ok()) return array.status();
  return std::move(array->data);
}

std::vector<std::string> IdxFileNames(Split split, bool images) {
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  const std::string kind = images ? "images" : "labels";
  const std::string format = images ? "idx3-ubyte" : "idx1-ubyte";
  const std::string canonical = absl::StrCat(prefix, "-", kind, "-", format);
  const std::string dotted = absl::StrCat(prefix, "-", kind, ".", format);
  return {canonical, canonical + ".gz", dotted, dotted + ".gz"};
}

absl::StatusOr<IdxDataset> LoadIdxSplit(const std::string& dir, Split split) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat(dir, ": dataset directory"));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": dataset path is not a directory"));
  }
  absl::StatusOr<std::string> images_path = FindIdxFile(dir, split, true);
  if (!images_path.ok()) return images_path.status();
  absl::StatusOr<std::string> labels_path = FindIdxFile(dir, split, false);
  if (!labels_path.ok()) return labels_path.status();

  IdxDataset dataset;
  absl::StatusOr<IdxImages> images = ReadIdxImages(*images_path);
  if (!images.ok()) return images.status();
  dataset.images = *std::move(images);
  absl::StatusOr<std::vector<uint8_t>> labels = ReadIdxLabels(*labels_path);
  if (!labels.ok()) return labels.status();
  dataset.labels = *std::move(labels);

  if (static_cast<int64_t>(dataset.labels.size()) != dataset.images.count) {
    return absl::InvalidArgumentError(absl::StrCat(
        *images_path, " has ", dataset.images.count, " images but ",
        *labels_path, " has ", dataset.labels.size(), " labels"));
  }
  if (dataset.images.count == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(*images_path, ": no samples"));
  }
  return dataset;
}

}  // namespace ringleader
