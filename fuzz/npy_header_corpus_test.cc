// Replays the .npy fuzzer's seed corpus through its entry point with the
// default toolchain, so every `bazel test //...` checks the fuzzer's
// invariants on known inputs (an invariant that breaks aborts, which fails
// the test), plus every prefix of each seed and a few edge inputs.
// scripts/fuzz.sh runs the clang-built fuzzer itself.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/corpus_files.h"
#include "fuzz/npy_header_fuzzer.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

// bazel test runs in the runfiles tree, where data files keep their
// workspace-relative paths.
constexpr char kCorpusDir[] = "fuzz/corpus/npy_header";

// Exactly the bytes, in a buffer of their size (as libFuzzer passes them).
void Replay(const std::string& bytes) {
  const std::vector<uint8_t> buf(bytes.begin(), bytes.end());
  EXPECT_EQ(
      LLVMFuzzerTestOneInput(buf.empty() ? nullptr : buf.data(), buf.size()),
      0);
}

TEST(NpyHeaderCorpusTest, SeedCorpusKeepsTheInvariants) {
  const std::vector<std::string> files = CorpusFiles(kCorpusDir);
  // Valid files of every dtype and version, and broken ones.
  ASSERT_GE(files.size(), 20u) << "corpus missing from " << kCorpusDir;
  for (const std::string& name : files) {
    SCOPED_TRACE(name);
    const std::string bytes = Slurp(std::string(kCorpusDir) + "/" + name);
    ASSERT_FALSE(bytes.empty()) << "unreadable seed";
    Replay(bytes);
  }
}

TEST(NpyHeaderCorpusTest, EveryPrefixOfEverySeed) {
  for (const std::string& name : CorpusFiles(kCorpusDir)) {
    SCOPED_TRACE(name);
    const std::string bytes = Slurp(std::string(kCorpusDir) + "/" + name);
    for (size_t n = 0; n < bytes.size(); ++n) Replay(bytes.substr(0, n));
  }
}

TEST(NpyHeaderCorpusTest, EdgeInputsKeepTheInvariants) {
  Replay("");
  Replay(std::string(1, '\0'));
  Replay(std::string("\x93NUMPY", 6));
  Replay(std::string("\x93NUMPY\x01\x00\xff\xff", 10));
  Replay(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12));
  Replay(std::string("\x93NUMPY\x01\x00\x00\x00", 10));
}

}  // namespace
}  // namespace ringleader
