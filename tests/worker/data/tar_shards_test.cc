// WebDataset shards: samples grouped by key in archive order across a brace
// pattern's shards, labels from .cls; a sample without its label (or
// image, or with a bad label) and a corrupt shard fail naming the shard and
// the key, or are skipped and counted.
#include "worker/data/tar_shards.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/data/image_test_files.h"
#include "tests/worker/data/test_files.h"

namespace ringleader {
namespace {

using ::testing::HasSubstr;
using testing_files::ClassPicture;
using testing_files::EncodeJpeg;
using testing_files::TarBytes;

std::string Jpeg(int cls) {
  return EncodeJpeg(20, 16, ClassPicture(20, 16, cls, 1));
}

TEST(TarShardsTest, SamplesInOrderAcrossAPattern) {
  const std::string dir = testing_files::TempDir("shards");
  testing_files::WriteFile(dir + "/s-000.tar",
                           TarBytes({{"n1/k0.jpg", Jpeg(0)},
                                     {"n1/k0.cls", "0"},
                                     {"n1/k0.json", "{}"},
                                     {"n1/k1.cls", " 7\n"},
                                     {"n1/k1.jpg", Jpeg(7)}}));
  testing_files::WriteFile(
      dir + "/s-001.tar",
      TarBytes(
          {{"k2.png", testing_files::EncodePng(4, 4, ClassPicture(4, 4, 2, 1))},
           {"k2.cls", "2"}}));
  auto s = TarShardSamples::Open({dir + "/s-{000..001}.tar"}, false);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ((*s)->size(), 3);
  EXPECT_EQ((*s)->label(0), 0);
  EXPECT_EQ((*s)->label(1), 7);
  EXPECT_EQ((*s)->label(2), 2);
  EXPECT_EQ((*s)->num_classes(), 8);
  EXPECT_EQ((*s)->Name(1),
            absl::StrCat("sample n1/k1 of shard ", dir, "/s-000.tar"));
  std::string buffer;
  auto bytes = (*s)->Read(1, buffer);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(std::string(*bytes), Jpeg(7));
}

struct BadShard {
  std::vector<std::pair<std::string, std::string>> members;
  const char* says;
};

TEST(TarShardsTest, EveryBadSampleFailsNamingShardAndKey) {
  std::string cut = Jpeg(1);
  cut.resize(cut.size() / 2);
  const std::vector<BadShard> cases = {
      {{{"k.jpg", Jpeg(0)}}, "sample k of shard"},
      {{{"k.cls", "1"}}, "no image"},
      {{{"k.jpg", Jpeg(0)}, {"k.cls", "cat"}}, "not a class id"},
      {{{"k.jpg", cut}, {"k.cls", "1"}}, "a truncated JPEG"},
      {{{"k.jpg", ""}, {"k.cls", "1"}}, "an empty file"},
      {{{"k.webp", "RIFF"}, {"k.cls", "1"}}, "only JPEG and PNG"},
  };
  int n = 0;
  for (const BadShard& c : cases) {
    auto members = c.members;
    members.push_back({"good.jpg", Jpeg(0)});
    members.push_back({"good.cls", "0"});
    const std::string path =
        testing_files::TempPath(absl::StrCat("bad", n++, ".tar"));
    testing_files::WriteFile(path, TarBytes(members));
    auto s = TarShardSamples::Open({path}, false);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << c.says;
    EXPECT_THAT(s.status().message(), HasSubstr(c.says));
    EXPECT_THAT(s.status().message(),
                HasSubstr(absl::StrCat("sample k of shard ", path)));
    auto skipped = TarShardSamples::Open({path}, true);
    ASSERT_TRUE(skipped.ok()) << skipped.status();
    EXPECT_EQ((*skipped)->size(), 1);
    EXPECT_EQ((*skipped)->skipped().count, 1);
  }
}

TEST(TarShardsTest, CorruptOrMissingShard) {
  const std::string path = testing_files::TempPath("junk.tar");
  testing_files::WriteFile(path, std::string(3000, 'j'));
  auto s = TarShardSamples::Open({path}, true);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.status().message(), HasSubstr(absl::StrCat("shard ", path)));
  EXPECT_EQ(
      TarShardSamples::Open({"/nonexistent/x.tar"}, false).status().code(),
      absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ringleader
