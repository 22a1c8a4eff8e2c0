// A file written atomically is the old one or the whole new one: after a
// success, after a write that failed half way (the disk full: a file size
// limit), after a writer that never committed, and after a writer that died
// in the middle; a failure leaves no temporary file behind.
#include "common/atomic_file.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;

// A fresh directory of the test's own.
std::string TestDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  const std::string dir =
      std::string(t != nullptr ? t : "/tmp") + "/atomic_file_" +
      std::to_string(getpid()) + "_" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The names in `dir`.
std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(AtomicFileTest, WritesAndReplacesWholeFiles) {
  const std::string dir = TestDir();
  const std::string path = dir + "/f";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  EXPECT_EQ(Slurp(path), "first");
  const std::string big(3 << 20, 'x');
  ASSERT_TRUE(WriteFileAtomically(path, big).ok());
  EXPECT_EQ(Slurp(path), big);
  ASSERT_TRUE(WriteFileAtomically(path, "").ok());
  EXPECT_EQ(Slurp(path), "");
  EXPECT_EQ(Names(dir), std::vector<std::string>{"f"});
}

TEST(AtomicFileTest, AppendsInPieces) {
  const std::string dir = TestDir();
  AtomicFile f(dir + "/pieces");
  ASSERT_TRUE(f.Append("a").ok());
  ASSERT_TRUE(f.Append("bc").ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/pieces"));  // Not yet.
  ASSERT_TRUE(f.Commit().ok());
  EXPECT_EQ(Slurp(dir + "/pieces"), "abc");
  EXPECT_FALSE(f.Commit().ok());  // Once only.
  EXPECT_EQ(Names(dir), std::vector<std::string>{"pieces"});
}

// A library that saves to a path (torch's save) writes the temporary file
// by name; Commit finishes it.
TEST(AtomicFileTest, AWriterByNameCommitsTheTemporaryFile) {
  const std::string dir = TestDir();
  const std::string path = dir + "/model.pt";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  {
    AtomicFile f(path);
    EXPECT_EQ(std::filesystem::path(f.temp_path()).parent_path(),
              std::filesystem::path(dir));
    std::ofstream(f.temp_path(), std::ios::binary) << "new";
    ASSERT_TRUE(f.Commit().ok());
  }
  EXPECT_EQ(Slurp(path), "new");
  {
    // A save that threw half way: never committed.
    AtomicFile f(path);
    std::ofstream(f.temp_path(), std::ios::binary) << "ne";
  }
  EXPECT_EQ(Slurp(path), "new");
  EXPECT_EQ(Names(dir), std::vector<std::string>{"model.pt"});
  // Nothing written by name: nothing to commit, the old file stays.
  AtomicFile nothing(path);
  EXPECT_FALSE(nothing.Commit().ok());
  EXPECT_EQ(Slurp(path), "new");
}

// The disk fills in the middle of the write (a file size limit makes
// write(2) fail with EFBIG): the old file is intact and the temporary file
// is gone.
TEST(AtomicFileTest, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  const std::string dir = TestDir();
  const std::string path = dir + "/ckpt";
  ASSERT_TRUE(WriteFileAtomically(path, "the old checkpoint").ok());
  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit limit = old_limit;
  limit.rlim_cur = 4096;
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  const absl::Status s = WriteFileAtomically(path, std::string(1 << 20, 'n'));
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("cannot write " + path));
  EXPECT_EQ(Slurp(path), "the old checkpoint");
  EXPECT_EQ(Names(dir), std::vector<std::string>{"ckpt"});
}

// A writer killed before its rename (a crash): readers still see the old
// file whole. Its temporary file is all it leaves.
TEST(AtomicFileTest, AWriterThatDiesMidWriteLeavesTheOldFile) {
  const std::string dir = TestDir();
  const std::string path = dir + "/state";
  ASSERT_TRUE(WriteFileAtomically(path, "old state").ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    AtomicFile f(path);
    (void)f.Append(std::string(1 << 16, 'h'));
    _exit(0);  // No destructor, no commit: as if killed here.
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(Slurp(path), "old state");
  for (const std::string& name : Names(dir)) {
    EXPECT_TRUE(name == "state" || name.rfind("state.tmp.", 0) == 0) << name;
  }
}

TEST(AtomicFileTest, ErrorsNameTheFile) {
  const std::string dir = TestDir();
  const absl::Status missing = WriteFileAtomically(dir + "/no/such/f", "x");
  EXPECT_TRUE(absl::IsNotFound(missing)) << missing;
  EXPECT_THAT(std::string(missing.message()),
              HasSubstr("cannot create " + dir + "/no/such/f.tmp."));
  // A directory in the way of the rename.
  std::filesystem::create_directories(dir + "/taken");
  std::filesystem::create_directories(dir + "/taken/inside");
  const absl::Status taken = WriteFileAtomically(dir + "/taken", "x");
  EXPECT_TRUE(absl::IsInternal(taken)) << taken;
  EXPECT_THAT(std::string(taken.message()),
              HasSubstr("into " + dir + "/taken"));
  EXPECT_EQ(Names(dir), std::vector<std::string>{"taken"});
}

// Writers of one path at once each write a temporary file of their own: the
// file ends as one of them wrote it, whole.
TEST(AtomicFileTest, ConcurrentWritersOfOnePathDoNotMix) {
  const std::string dir = TestDir();
  const std::string path = dir + "/shared";
  std::vector<std::thread> writers;
  for (char c : std::string("abcd")) {
    writers.emplace_back([&path, c] {
      for (int i = 0; i < 20; ++i) {
        EXPECT_TRUE(WriteFileAtomically(path, std::string(100000, c)).ok());
      }
    });
  }
  for (std::thread& t : writers) t.join();
  const std::string got = Slurp(path);
  ASSERT_EQ(got.size(), 100000u);
  EXPECT_EQ(got, std::string(100000, got[0]));
  EXPECT_EQ(Names(dir), std::vector<std::string>{"shared"});
}

}  // namespace
}  // namespace ringleader
