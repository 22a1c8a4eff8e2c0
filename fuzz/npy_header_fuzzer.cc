// Feeds arbitrary bytes to ParseNpyHeader (worker/data/npy_header.h), the
// one place where a user's .npy file is interpreted before the worker maps
// its rows. Besides "no crash, no sanitizer report" (libFuzzer hands the
// bytes over in a buffer of exactly their size, so any read past them is an
// ASan report), each input must keep these invariants:
//   - an error is INVALID_ARGUMENT or DATA_LOSS, one line, starting with the
//     path given;
//   - an accepted header describes bytes inside the input: data_offset +
//     data_bytes <= size, data_bytes = product(shape) x element size, at
//     most kMaxNpyDims dimensions, none negative; parsing again gives the
//     same result;
//   - FormatNpyHeader of what was parsed, followed by the same data, parses
//     back to the same dtype and shape;
//   - a small accepted array of at least one dimension also opens as an
//     NpyDataset (memory-mapped from a scratch file, as its own inputs and
//     targets) whose every row gathers without error.
#include "fuzz/npy_header_fuzzer.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/data/dataset.h"
#include "worker/data/npy_dataset.h"
#include "worker/data/npy_header.h"

namespace ringleader {
namespace {

#define FUZZ_CHECK(cond, detail)                                              \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "npy_header_fuzzer: invariant failed: %s\n  %s\n", \
                   #cond, std::string(detail).c_str());                       \
      std::abort();                                                           \
    }                                                                         \
  } while (0)

constexpr char kPath[] = "fuzz.npy";
// Arrays up to this size are also opened as a dataset.
constexpr size_t kMaxDatasetBytes = size_t{1} << 16;

std::string Describe(const NpyHeader& h) {
  return absl::StrCat(NpyDtypeName(h.dtype), " (", absl::StrJoin(h.shape, ", "),
                      ") at ", h.data_offset, " + ", h.data_bytes);
}

void CheckError(const absl::Status& s) {
  FUZZ_CHECK(s.code() == absl::StatusCode::kInvalidArgument ||
                 s.code() == absl::StatusCode::kDataLoss,
             s.ToString());
  FUZZ_CHECK(absl::StartsWith(s.message(), absl::StrCat(kPath, ": ")),
             s.ToString());
  FUZZ_CHECK(s.message().size() > sizeof(kPath) + 1, s.ToString());
  FUZZ_CHECK(!absl::StrContains(s.message(), '\n'), s.ToString());
}

void CheckAccepted(const NpyHeader& h, const uint8_t* data, size_t size) {
  FUZZ_CHECK(h.data_offset >= 10 && h.data_offset <= size, Describe(h));
  FUZZ_CHECK(h.data_bytes <= size - h.data_offset, Describe(h));
  FUZZ_CHECK(h.shape.size() <= kMaxNpyDims, Describe(h));
  unsigned __int128 bytes = NpyDtypeSize(h.dtype);
  for (int64_t d : h.shape) {
    FUZZ_CHECK(d >= 0, Describe(h));
    bytes *= static_cast<uint64_t>(d);
    if (bytes > size) bytes = size + 1;  // Stays far from overflow.
  }
  FUZZ_CHECK(bytes == h.data_bytes, Describe(h));
  if (h.data_bytes > 0) {
    // Inside the buffer, as ASan would tell.
    volatile uint8_t last = data[h.data_offset + h.data_bytes - 1];
    (void)last;
  }
}

void CheckRoundTrip(const NpyHeader& h, const uint8_t* data) {
  const std::string bytes =
      FormatNpyHeader(h.dtype, h.shape) +
      std::string(reinterpret_cast<const char*>(data) + h.data_offset,
                  h.data_bytes);
  const absl::StatusOr<NpyHeader> again = ParseNpyHeader(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), kPath);
  FUZZ_CHECK(again.ok(), again.status().ToString());
  FUZZ_CHECK(again->dtype == h.dtype && again->shape == h.shape &&
                 again->data_bytes == h.data_bytes &&
                 again->data_offset + again->data_bytes == bytes.size(),
             Describe(*again));
}

const std::string& ScratchFile() {
  static const std::string* path = [] {
    const char* tmp = std::getenv("TEST_TMPDIR");
    std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp",
                                   "/npy_header_fuzzer.XXXXXX");
    FUZZ_CHECK(mkdtemp(&dir[0]) != nullptr, dir);
    return new std::string(absl::StrCat(dir, "/array.npy"));
  }();
  return *path;
}

// The whole input as a file, opened as a dataset of itself.
void CheckDataset(const NpyHeader& h, const uint8_t* data, size_t size) {
  if (h.shape.empty() || h.data_bytes > kMaxDatasetBytes) return;
  {
    std::ofstream out(ScratchFile(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data),
              static_cast<std::streamsize>(size));
    FUZZ_CHECK(out.good(), ScratchFile());
  }
  auto ds = NpyDataset::Create(Split::kTest, {ScratchFile()}, ScratchFile());
  FUZZ_CHECK(ds.ok(), ds.status().ToString());
  const int64_t rows = (*ds)->size();
  FUZZ_CHECK(rows == h.shape[0], Describe(h));
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < rows && i < 64; ++i) indices.push_back(i);
  if (rows > 64) indices.push_back(rows - 1);
  const FieldShape input = (*ds)->input_fields()[0];
  std::vector<uint8_t> inputs(indices.size() * input.bytes());
  std::vector<uint8_t> targets(indices.size() * (*ds)->target_field().bytes());
  const absl::Status s = (*ds)->GatherFields(indices.data(), indices.size(),
                                             {inputs.data()}, targets.data());
  FUZZ_CHECK(s.ok(), s.ToString());
}

}  // namespace
}  // namespace ringleader

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringleader;  // NOLINT: the entry point is global.
  const absl::StatusOr<NpyHeader> header = ParseNpyHeader(data, size, kPath);
  const absl::StatusOr<NpyHeader> again = ParseNpyHeader(data, size, kPath);
  FUZZ_CHECK(header.status() == again.status(), again.status().ToString());
  if (!header.ok()) {
    CheckError(header.status());
    return 0;
  }
  FUZZ_CHECK(header->shape == again->shape &&
                 header->data_offset == again->data_offset,
             Describe(*again));
  CheckAccepted(*header, data, size);
  CheckRoundTrip(*header, data);
  CheckDataset(*header, data, size);
  return 0;
}
