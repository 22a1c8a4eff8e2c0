// Replays the image decode fuzzer's seed corpus through its entry point with
// the default toolchain, so every `bazel test //...` checks the fuzzer's
// invariants on known inputs (a broken invariant aborts, which fails the
// test), plus prefixes of each seed. scripts/fuzz.sh runs the clang-built
// fuzzer itself.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/corpus_files.h"
#include "fuzz/image_decode_fuzzer.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

constexpr char kCorpusDir[] = "fuzz/corpus/image_decode";

void Replay(const std::string& bytes) {
  const std::vector<uint8_t> buf(bytes.begin(), bytes.end());
  EXPECT_EQ(
      LLVMFuzzerTestOneInput(buf.empty() ? nullptr : buf.data(), buf.size()),
      0);
}

TEST(ImageDecodeCorpusTest, SeedCorpusKeepsTheInvariants) {
  const std::vector<std::string> files = CorpusFiles(kCorpusDir);
  ASSERT_GE(files.size(), 10u) << "corpus missing from " << kCorpusDir;
  for (const std::string& name : files) {
    SCOPED_TRACE(name);
    const std::string bytes = Slurp(std::string(kCorpusDir) + "/" + name);
    ASSERT_FALSE(bytes.empty()) << "unreadable seed";
    Replay(bytes);
  }
}

// Every cut of every seed at a step: truncated files of every kind.
TEST(ImageDecodeCorpusTest, PrefixesOfEverySeed) {
  for (const std::string& name : CorpusFiles(kCorpusDir)) {
    SCOPED_TRACE(name);
    const std::string bytes = Slurp(std::string(kCorpusDir) + "/" + name);
    for (size_t n = 0; n < bytes.size(); n += 7) Replay(bytes.substr(0, n));
  }
}

}  // namespace
}  // namespace ringleader
