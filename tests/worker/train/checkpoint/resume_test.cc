// Choosing the checkpoint to resume from: the first readable of the offered
// ones, the ranks' votes, and the pruning of old checkpoint files.
#include "worker/train/checkpoint/resume.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "gtest/gtest.h"
#include "worker/train/checkpoint/checkpoint_file.h"

namespace ringleader {
namespace {

std::string FreshDir(const std::string& name) {
  const char* d = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(d ? d : "/tmp") + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

v1::CheckpointRecord Record(int64_t id, const std::string& path) {
  v1::CheckpointRecord r;
  r.set_checkpoint_id(id);
  r.set_path(path);
  return r;
}

std::set<std::string> Files(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.insert(e.path().filename().string());
  }
  return out;
}

// Real checkpoint envelopes on disk, newest torn in different ways: the
// loader is the real reader, so the codes are those a trainer sees.
TEST(ChooseCheckpointTest, SkipsTornTruncatedCorruptAndMissingFiles) {
  const std::string dir = FreshDir("choose");
  std::vector<v1::CheckpointRecord> c;
  for (int i = 0; i < 4; ++i) {
    const std::string path = CheckpointPath(dir, "job", 40 - 10 * i);
    ASSERT_TRUE(WriteCheckpointFile(path, std::string(1000, 'a' + i)).ok());
    c.push_back(Record(9 - i, path));
  }
  // Newest: truncated (a torn write). Next: one byte flipped. Next: gone.
  std::filesystem::resize_file(c[0].path(), 600);
  {
    std::fstream f(c[1].path(),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(500);
    f.put('X');
  }
  std::filesystem::remove(c[2].path());
  std::vector<std::string> loaded;
  auto load = [&](const v1::CheckpointRecord& r) -> absl::Status {
    absl::StatusOr<std::string> payload = ReadCheckpointFile(r.path());
    if (!payload.ok()) return payload.status();
    loaded.push_back(*payload);
    return absl::OkStatus();
  };
  absl::StatusOr<ResumeChoice> choice = ChooseCheckpoint(c, load);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->index, 3);
  EXPECT_EQ(loaded, std::vector<std::string>{std::string(1000, 'd')});
  ASSERT_EQ(choice->skipped.size(), 3u);
  EXPECT_NE(choice->skipped[0].find("job-step40.ckpt"), std::string::npos);
  EXPECT_NE(choice->skipped[0].find("torn or corrupt"), std::string::npos);
  EXPECT_NE(choice->skipped[1].find("checksum mismatch"), std::string::npos);
  EXPECT_NE(choice->skipped[2].find("No such file"), std::string::npos);

  // The newest readable wins; nothing older is even opened.
  loaded.clear();
  choice = ChooseCheckpoint({c[3], c[0]}, load);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->index, 0);
  EXPECT_TRUE(choice->skipped.empty());
  EXPECT_EQ(loaded.size(), 1u);

  // None readable.
  choice = ChooseCheckpoint({c[0], c[1], c[2]}, load);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->index, -1);
  EXPECT_EQ(choice->skipped.size(), 3u);
  choice = ChooseCheckpoint({}, load);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->index, -1);
}

TEST(ChooseCheckpointTest, AnErrorThatIsNotTheFilesStopsTheSearch) {
  int calls = 0;
  auto load = [&](const v1::CheckpointRecord& r) -> absl::Status {
    ++calls;
    if (r.checkpoint_id() == 3) return absl::DataLossError("torn");
    return absl::InternalError("cannot read: Input/output error");
  };
  absl::StatusOr<ResumeChoice> choice =
      ChooseCheckpoint({Record(3, "a"), Record(2, "b"), Record(1, "c")}, load);
  EXPECT_TRUE(absl::IsInternal(choice.status())) << choice.status();
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(IsUnreadableCheckpoint(absl::DataLossError("")));
  EXPECT_TRUE(IsUnreadableCheckpoint(absl::NotFoundError("")));
  EXPECT_TRUE(IsUnreadableCheckpoint(absl::InvalidArgumentError("")));
  EXPECT_FALSE(IsUnreadableCheckpoint(absl::InternalError("")));
  EXPECT_FALSE(IsUnreadableCheckpoint(absl::PermissionDeniedError("")));
}

std::vector<int64_t> Sum(const std::vector<std::vector<int64_t>>& votes) {
  std::vector<int64_t> out(votes[0].size(), 0);
  for (const auto& v : votes) {
    for (size_t i = 0; i < v.size(); ++i) out[i] += v[i];
  }
  return out;
}

TEST(AgreedCheckpointTest, AllRanksOnOneCandidate) {
  const std::vector<v1::CheckpointRecord> c = {Record(7, "/c/s30"),
                                               Record(5, "/c/s20")};
  EXPECT_EQ(ResumeVote(1, 2), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(ResumeVote(-1, 2), (std::vector<int64_t>{0, 0, 1}));
  ResumeChoice mine;
  mine.index = 1;
  absl::StatusOr<int> agreed = AgreedCheckpoint(
      Sum({ResumeVote(1, 2), ResumeVote(1, 2), ResumeVote(1, 2)}), 3, c, mine);
  ASSERT_TRUE(agreed.ok()) << agreed.status();
  EXPECT_EQ(*agreed, 1);
  agreed = AgreedCheckpoint(ResumeVote(0, 2), 1, c, mine);
  ASSERT_TRUE(agreed.ok());
  EXPECT_EQ(*agreed, 0);
}

TEST(AgreedCheckpointTest, DisagreementAndNoneReadableAreClearFailures) {
  const std::vector<v1::CheckpointRecord> c = {Record(7, "/c/s30"),
                                               Record(5, "/c/s20")};
  ResumeChoice mine;
  mine.index = 0;
  absl::StatusOr<int> agreed = AgreedCheckpoint(
      Sum({ResumeVote(0, 2), ResumeVote(1, 2), ResumeVote(-1, 2)}), 3, c, mine);
  ASSERT_TRUE(absl::IsFailedPrecondition(agreed.status())) << agreed.status();
  EXPECT_EQ(agreed.status().message(),
            "ranks disagree on the checkpoint to resume from (1 loaded "
            "checkpoint 7 (/c/s30), 1 loaded checkpoint 5 (/c/s20), 1 could "
            "read none): every rank must see the same checkpoint directory");

  mine.index = -1;
  mine.skipped = {"/c/s30: torn", "/c/s20: gone"};
  agreed =
      AgreedCheckpoint(Sum({ResumeVote(-1, 2), ResumeVote(-1, 2)}), 2, c, mine);
  ASSERT_TRUE(absl::IsFailedPrecondition(agreed.status()));
  EXPECT_EQ(agreed.status().message(),
            "no committed checkpoint could be read (2 tried, newest first): "
            "/c/s30: torn; /c/s20: gone");
}

TEST(AgreedCheckpointTest, VotesThatDoNotAddUpAreInternal) {
  const std::vector<v1::CheckpointRecord> c = {Record(7, "a")};
  ResumeChoice mine;
  EXPECT_TRUE(absl::IsInternal(AgreedCheckpoint({1, 0}, 2, c, mine).status()));
  EXPECT_TRUE(absl::IsInternal(AgreedCheckpoint({2}, 2, c, mine).status()));
  EXPECT_TRUE(absl::IsInternal(AgreedCheckpoint({3, -1}, 2, c, mine).status()));
}

TEST(PruneCheckpointFilesTest, KeepsTheNewestCommittedAndLeavesOthersAlone) {
  const std::string dir = FreshDir("prune");
  for (int step : {10, 20, 30, 40, 50, 60}) {
    ASSERT_TRUE(
        WriteCheckpointFile(CheckpointPath(dir, "job", step), "x").ok());
  }
  // Other jobs' files, and names that only look like ours.
  for (const char* name :
       {"other-step10.ckpt", "job-step1-step5.ckpt", "job-step.ckpt",
        "job-stepx.ckpt", "job-step5.tmp", "job-step5.ckpt.tmp.42"}) {
    std::ofstream(dir + "/" + name) << "y";
  }
  // Committed at 50: 60 is newer (from a generation that went back) and
  // stays; of 10..50 the three newest stay.
  ASSERT_TRUE(PruneCheckpointFiles(dir, "job", 50, 3).ok());
  EXPECT_EQ(Files(dir),
            (std::set<std::string>{"job-step30.ckpt", "job-step40.ckpt",
                                   "job-step50.ckpt", "job-step60.ckpt",
                                   "other-step10.ckpt", "job-step1-step5.ckpt",
                                   "job-step.ckpt", "job-stepx.ckpt",
                                   "job-step5.tmp", "job-step5.ckpt.tmp.42"}));
  ASSERT_TRUE(PruneCheckpointFiles(dir, "job", 60, 3).ok());
  EXPECT_EQ(Files(dir).count("job-step30.ckpt"), 0u);
  EXPECT_EQ(Files(dir).count("job-step40.ckpt"), 1u);
  // Nothing to delete is fine; a missing directory is an error.
  EXPECT_TRUE(PruneCheckpointFiles(dir, "job", 60, 3).ok());
  EXPECT_FALSE(PruneCheckpointFiles(dir + "/nope", "job", 60, 3).ok());
}

}  // namespace
}  // namespace ringleader
