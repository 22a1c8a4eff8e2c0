#include "worker/train/checkpoint/checkpoint_file.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

std::string Tmp(const std::string& name) {
  const char* d = std::getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Spit(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

TEST(CheckpointFileTest, RoundTripAndReplace) {
  const std::string path = Tmp("a.ckpt");
  std::string payload(100000, '\0');
  for (size_t i = 0; i < payload.size(); ++i)
    payload[i] = static_cast<char>(i * 31);
  ASSERT_TRUE(WriteCheckpointFile(path, payload).ok());
  EXPECT_EQ(*ReadCheckpointFile(path), payload);
  ASSERT_TRUE(WriteCheckpointFile(path, "second").ok());
  EXPECT_EQ(*ReadCheckpointFile(path), "second");
  ASSERT_TRUE(WriteCheckpointFile(path, "").ok());
  EXPECT_EQ(*ReadCheckpointFile(path), "");
}

// DATA_LOSS naming the file and what is wrong with it.
void ExpectDataLoss(const std::string& path, const std::string& why) {
  absl::StatusOr<std::string> r = ReadCheckpointFile(path);
  EXPECT_TRUE(absl::IsDataLoss(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("checkpoint " + path +
                                      " is torn or corrupt: " + why),
            std::string::npos)
      << r.status();
}

TEST(CheckpointFileTest, TornAndCorruptFilesAreDataLoss) {
  const std::string path = Tmp("b.ckpt");
  ASSERT_TRUE(WriteCheckpointFile(path, std::string(5000, 'x')).ok());
  const std::string good = Slurp(path);
  const size_t header = good.size() - 5000;
  Spit(path, good.substr(0, good.size() - 100));  // Torn tail.
  ExpectDataLoss(path, "payload is 4900 bytes, header says 5000");
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x40;
  Spit(path, flipped);
  ExpectDataLoss(path, "checksum mismatch");
  Spit(path, "garbage");
  ExpectDataLoss(path, "bad header");
  Spit(path, "");
  ExpectDataLoss(path, "bad header");
  Spit(path, good.substr(0, header - 1));  // Torn inside the header.
  ExpectDataLoss(path, "bad header");
  std::string longer = good + "extra";
  Spit(path, longer);
  ExpectDataLoss(path, "payload is 5005 bytes, header says 5000");
}

TEST(CheckpointFileTest, MissingFileAndBadDirectory) {
  EXPECT_TRUE(absl::IsNotFound(ReadCheckpointFile(Tmp("none.ckpt")).status()));
  EXPECT_FALSE(WriteCheckpointFile("/nonexistent-dir/x.ckpt", "p").ok());
  EXPECT_FALSE(ReadCheckpointFile(Tmp("")).ok());  // A directory.
}

}  // namespace
}  // namespace ringleader
