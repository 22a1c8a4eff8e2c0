// Feeds arbitrary bytes to the tar reader (worker/data/tar_reader.h) and, as
// a shard file, to the WebDataset index (worker/data/tar_shards.h). Besides
// "no crash, no sanitizer report, no hang", each input must keep these
// invariants:
//   - an error is DATA_LOSS (INVALID_ARGUMENT for a shard without samples),
//     one line;
//   - every member lies inside the input, at a 512-byte boundary after its
//     header, in increasing order;
//   - the shard index, with skip_corrupt, holds only samples whose image
//     bytes lie inside the file and whose label is >= 0; without it, it
//     either fails or holds the same samples.
#include "fuzz/tar_reader_fuzzer.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "worker/data/tar_reader.h"
#include "worker/data/tar_shards.h"

namespace ringleader {
namespace {

#define FUZZ_CHECK(cond, detail)                                              \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "tar_reader_fuzzer: invariant failed: %s\n  %s\n", \
                   #cond, std::string(detail).c_str());                       \
      std::abort();                                                           \
    }                                                                         \
  } while (0)

void CheckError(const absl::Status& s) {
  FUZZ_CHECK(s.code() == absl::StatusCode::kDataLoss ||
                 s.code() == absl::StatusCode::kInvalidArgument,
             s.ToString());
  FUZZ_CHECK(!absl::StrContains(s.message(), '\n'), s.ToString());
}

// The shard index over the bytes as a file (it maps its shards).
void CheckShard(const uint8_t* data, size_t size) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(tmp != nullptr ? tmp : "/tmp",
                                        "/tar_fuzz_", getpid(), ".tar");
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data),
            static_cast<std::streamsize>(size));
  }
  auto skipping = TarShardSamples::Open({path}, true);
  auto strict = TarShardSamples::Open({path}, false);
  if (!skipping.ok()) {
    CheckError(skipping.status());
    FUZZ_CHECK(!strict.ok(), "strict fails where skipping does");
  } else {
    std::string buffer;
    for (int64_t i = 0; i < (*skipping)->size(); ++i) {
      auto bytes = (*skipping)->Read(i, buffer);
      FUZZ_CHECK(bytes.ok(), bytes.status().ToString());
      FUZZ_CHECK(bytes->size() <= size, "an image inside the shard");
      FUZZ_CHECK((*skipping)->label(i) >= 0, "a label >= 0");
    }
    if (strict.ok()) {
      FUZZ_CHECK((*strict)->size() == (*skipping)->size(), "the same samples");
    } else {
      CheckError(strict.status());
      FUZZ_CHECK((*skipping)->skipped().count > 0, "strict failed on a skip");
    }
  }
  unlink(path.c_str());
}

}  // namespace
}  // namespace ringleader

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringleader;
  auto members = ListTarMembers(data, size);
  if (!members.ok()) {
    CheckError(members.status());
  } else {
    uint64_t last = 0;
    for (const TarMember& m : *members) {
      FUZZ_CHECK(m.offset % 512 == 0 && m.offset >= 512, "a block boundary");
      FUZZ_CHECK(m.offset > last, "in order");
      FUZZ_CHECK(
          m.offset <= size && m.size <= size - m.offset,
          absl::StrCat("inside: ", m.offset, " + ", m.size, " of ", size));
      last = m.offset;
    }
  }
  CheckShard(data, size);
  return 0;
}
