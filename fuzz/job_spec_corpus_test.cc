// Replays the job-spec fuzzer's seed corpus and the shipped examples through
// the fuzzer's entry point, with the default toolchain, so every
// `bazel test //...` checks the fuzzer's invariants on known inputs (an
// invariant that breaks aborts, which fails the test). scripts/fuzz.sh runs
// the clang-built fuzzer itself.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/corpus_files.h"
#include "fuzz/job_spec_fuzzer.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

// bazel test runs in the runfiles tree, where data files keep their
// workspace-relative paths.
constexpr char kCorpusDir[] = "fuzz/corpus/job_spec";

void Replay(const std::string& bytes) {
  EXPECT_EQ(LLVMFuzzerTestOneInput(
                reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
            0);
}

TEST(JobSpecCorpusTest, SeedCorpusKeepsTheInvariants) {
  const std::vector<std::string> files = CorpusFiles(kCorpusDir);
  // The seeds cover both formats, valid and broken specs.
  ASSERT_GE(files.size(), 15u) << "corpus missing from " << kCorpusDir;
  for (const std::string& name : files) {
    SCOPED_TRACE(name);
    const std::string bytes = Slurp(std::string(kCorpusDir) + "/" + name);
    ASSERT_TRUE(!bytes.empty() || name.empty()) << "unreadable seed";
    Replay(bytes);
  }
}

TEST(JobSpecCorpusTest, ExamplesKeepTheInvariants) {
  const std::string example = Slurp("examples/fashion_mnist.textproto");
  ASSERT_FALSE(example.empty());
  Replay(example);
}

TEST(JobSpecCorpusTest, EdgeInputsKeepTheInvariants) {
  Replay("");
  Replay(std::string(1, '\0'));
  Replay("{}");
  Replay("name: \"x\"");
  // Just over the file-size cap: the file path refuses it, parsing does not.
  Replay(std::string((1 << 20) + 1, ' ') + "name: \"big\"");
  // Every prefix of a full spec: truncated files at each byte.
  const std::string full = Slurp(std::string(kCorpusDir) + "/full.textproto");
  ASSERT_FALSE(full.empty());
  for (size_t n = 0; n <= full.size(); n += 7) Replay(full.substr(0, n));
}

}  // namespace
}  // namespace ringleader
