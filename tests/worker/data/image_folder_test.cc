// ImageFolder listing: torchvision's own ImageFolder on the same tree gives
// the same samples in the same order (nested folders, upper-case
// extensions, links, files that are not images); and every bad file fails
// the listing naming it, or is skipped and counted with skip_corrupt.
#include "worker/data/image_folder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
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
using testing_files::EncodePng;
using testing_files::WriteFile;

std::string Jpeg(int cls) {
  return EncodeJpeg(20, 16, ClassPicture(20, 16, cls, 1));
}

// root/<class>/... with the files given, relative to root.
std::string Tree(
    const std::string& name,
    const std::vector<std::pair<std::string, std::string>>& files) {
  const std::string root = testing_files::TempDir(name);
  for (const auto& [rel, bytes] : files) {
    std::string dir = root;
    size_t pos = 0;
    while ((pos = rel.find('/', pos)) != std::string::npos) {
      ::mkdir(absl::StrCat(root, "/", rel.substr(0, pos)).c_str(), 0755);
      ++pos;
    }
    WriteFile(absl::StrCat(root, "/", rel), bytes);
  }
  return root;
}

TEST(ImageFolderTest, SameSamplesAndOrderAsTorchvision) {
  const std::string root =
      Tree("order", {{"dog/b.JPG", Jpeg(1)},
                     {"dog/a.png", EncodePng(8, 8, ClassPicture(8, 8, 1, 2))},
                     {"dog/sub/z.jpeg", Jpeg(1)},
                     {"dog/sub b/y.jpg", Jpeg(1)},
                     {"dog/notes.txt", "not an image"},
                     {"cat/x.jpg", Jpeg(0)},
                     {"Zebra/q.jpg", Jpeg(2)},
                     {"loose.jpg", Jpeg(3)}});
  ::symlink(absl::StrCat(root, "/cat").c_str(),
            absl::StrCat(root, "/dog/linked").c_str());
  auto samples = ImageFolderSamples::Open(root, false);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_THAT((*samples)->class_names(),
              ::testing::ElementsAre("Zebra", "cat", "dog"));
  std::string why;
  if (!testing_files::HaveTorchvision(why)) GTEST_SKIP() << why;
  const std::string out = testing_files::TempPath("order.txt");
  ASSERT_TRUE(testing_files::RunPythonArgs(
      "import sys\nfrom torchvision.datasets import ImageFolder\n"
      "d = ImageFolder(sys.argv[1])\n"
      "open(sys.argv[2], 'w').write(''.join(f'{c}\\t{p}\\n' for p, c in "
      "d.samples))\n",
      {root, out}));
  std::ifstream in(out);
  int64_t i = 0;
  for (std::string line; std::getline(in, line);) {
    const size_t tab = line.find('\t');
    const int64_t cls = std::stoll(line.substr(0, tab));
    const std::string path = line.substr(tab + 1);
    ASSERT_LT(i, (*samples)->size());
    EXPECT_EQ((*samples)->Name(i), path) << "sample " << i;
    EXPECT_EQ((*samples)->label(i), cls) << "sample " << i;
    ++i;
  }
  EXPECT_EQ(i, (*samples)->size());
}

struct BadCase {
  const char* name;
  std::string bytes;
  const char* says;
};

TEST(ImageFolderTest, EveryBadFileFailsNamingIt) {
  std::string truncated = Jpeg(0);
  truncated.resize(truncated.size() / 2);
  const std::vector<BadCase> cases = {
      {"empty.jpg", "", "an empty file (0 bytes)"},
      {"text.jpg", "hello, not a picture", "not a JPEG or PNG image"},
      {"cut.jpg", truncated, "a truncated JPEG"},
      {"pic.webp", "RIFF....WEBP", "only JPEG and PNG"},
  };
  for (const BadCase& c : cases) {
    const std::string root =
        Tree(absl::StrCat("bad_", c.name),
             {{"a/good.jpg", Jpeg(0)}, {absl::StrCat("a/", c.name), c.bytes}});
    auto samples = ImageFolderSamples::Open(root, false);
    EXPECT_EQ(samples.status().code(), absl::StatusCode::kDataLoss) << c.name;
    EXPECT_THAT(samples.status().message(),
                HasSubstr(absl::StrCat(root, "/a/", c.name, ": ")));
    EXPECT_THAT(samples.status().message(), HasSubstr(c.says));
    auto skipped = ImageFolderSamples::Open(root, true);
    ASSERT_TRUE(skipped.ok()) << skipped.status();
    EXPECT_EQ((*skipped)->size(), 1);
    EXPECT_EQ((*skipped)->skipped().count, 1);
  }
}

TEST(ImageFolderTest, EmptyClassFolderFailsOrCounts) {
  const std::string root =
      Tree("emptyclass", {{"a/x.jpg", Jpeg(0)}, {"b/readme.txt", "no images"}});
  auto samples = ImageFolderSamples::Open(root, false);
  EXPECT_THAT(samples.status().message(),
              HasSubstr(absl::StrCat("class folder ", root, "/b holds no")));
  auto skipped = ImageFolderSamples::Open(root, true);
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ((*skipped)->num_classes(), 2);  // Ids as torchvision numbers them.
  EXPECT_EQ((*skipped)->skipped().count, 1);
}

TEST(ImageFolderTest, MissingOrClasslessRoot) {
  EXPECT_EQ(
      ImageFolderSamples::Open("/nonexistent/root", false).status().code(),
      absl::StatusCode::kNotFound);
  const std::string flat = Tree("flat", {{"x.jpg", Jpeg(0)}});
  EXPECT_THAT(ImageFolderSamples::Open(flat, false).status().message(),
              HasSubstr("holds no class folder"));
}

}  // namespace
}  // namespace ringleader
