// The image pipeline against PIL and torchvision themselves, on files PIL
// wrote (tests/worker/data/image_reference.py, run with /usr/bin/python3):
// decoded pixels equal to PIL's (the same libjpeg-turbo, so exactly, JPEG
// included; Image.draft's reduced JPEG scales too), RandomResizedCrop boxes
// equal to get_params' from the same draws, and the reference recipe's
// tensors (RandomResizedCrop + flip; Resize + CenterCrop; ToTensor and
// Normalize) equal up to float rounding. Skips, saying why, only when
// python3 with torchvision is missing.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/worker/data/image_test_files.h"
#include "tests/worker/data/npy_test_files.h"
#include "tests/worker/data/test_files.h"
#include "worker/data/crop_geometry.h"
#include "worker/data/image_transform.h"
#include "worker/data/jpeg_decoder.h"
#include "worker/data/png_decoder.h"
#include "worker/data/sample_random.h"

namespace ringleader {
namespace {

using testing_files::ReadBytes;

class ImagePilTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing_files::TempDir("pil"));
    skip_ = new std::string;
    if (!testing_files::HaveTorchvision(*skip_)) return;
    const std::string script =
        ReadBytes("tests/worker/data/image_reference.py");
    failed_ = !testing_files::RunPythonArgs(script, {*dir_});
  }

  void SetUp() override {
    if (!skip_->empty()) GTEST_SKIP() << *skip_;
    ASSERT_FALSE(failed_) << "image_reference.py failed";
  }

  static std::vector<std::vector<std::string>> Lines(const std::string& name) {
    std::ifstream in(*dir_ + "/" + name);
    std::vector<std::vector<std::string>> out;
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      std::vector<std::string> w;
      for (std::string s; words >> s;) w.push_back(s);
      if (!w.empty()) out.push_back(w);
    }
    return out;
  }

  static std::string* dir_;
  static std::string* skip_;
  static bool failed_;
};

std::string* ImagePilTest::dir_ = nullptr;
std::string* ImagePilTest::skip_ = nullptr;
bool ImagePilTest::failed_ = false;

absl::Status DecodeWhole(const std::string& bytes, int denom, RgbImage* out) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (SniffImageFormat(data, bytes.size()) == ImageFormat::kPng) {
    return DecodePng(data, bytes.size(), out);
  }
  return DecodeJpeg(
      data, bytes.size(),
      [denom](const JpegHeader&) {
        JpegPlan p;
        p.scale_denom = denom;
        return p;
      },
      out);
}

TEST_F(ImagePilTest, DecodedPixelsArePils) {
  const auto lines = Lines("decode.txt");
  ASSERT_GE(lines.size(), 14u);
  for (const auto& w : lines) {
    const std::string& name = w[0];
    const int denom = std::stoi(w[1]);
    SCOPED_TRACE(absl::StrCat(name, " at 1/", denom));
    RgbImage img;
    ASSERT_TRUE(DecodeWhole(ReadBytes(*dir_ + "/" + name), denom, &img).ok());
    EXPECT_EQ(img.width, std::stoi(w[2]));
    EXPECT_EQ(img.height, std::stoi(w[3]));
    const std::string want = ReadBytes(absl::StrCat(
        *dir_, "/", name, denom == 1 ? "" : absl::StrCat(".", denom), ".rgb"));
    ASSERT_EQ(img.pixels.size(), want.size());
    size_t differ = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      differ += img.pixels[i] != static_cast<uint8_t>(want[i]);
    }
    EXPECT_EQ(differ, 0u) << "bytes differ from PIL's";
  }
}

TEST_F(ImagePilTest, CropBoxesAreGetParams) {
  const auto lines = Lines("boxes.txt");
  ASSERT_GE(lines.size(), 900u);
  for (const auto& w : lines) {
    RandomResizedCropRange r{std::stod(w[2]), std::stod(w[3]), std::stod(w[4]),
                             std::stod(w[5])};
    SampleRandom rng(std::stoull(w[6]));
    const CropBox box = RandomResizedCropBox(std::stoi(w[0]), std::stoi(w[1]),
                                             r, [&] { return rng.Uniform(); });
    EXPECT_EQ(
        absl::StrCat(box.top, " ", box.left, " ", box.height, " ", box.width),
        absl::StrCat(w[7], " ", w[8], " ", w[9], " ", w[10]))
        << absl::StrJoin(w, " ");
  }
}

ImageTransformSpec RecipeSpec(bool train, bool reduced) {
  ImageTransformSpec s;
  s.size = 32;
  s.resize_size = 36;
  s.random_crop = train;
  s.horizontal_flip = train;
  s.mean = {0.485, 0.456, 0.406};
  s.std = {0.229, 0.224, 0.225};
  s.reduced_decode = reduced;
  return s;
}

std::vector<float> ReadFloats(const std::string& path) {
  const std::string b = ReadBytes(path);
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

TEST_F(ImagePilTest, RecipeTensorsAreTorchvisions) {
  const auto lines = Lines("transform.txt");
  ASSERT_GE(lines.size(), 80u);
  for (const auto& w : lines) {
    SCOPED_TRACE(absl::StrJoin(w, " "));
    auto t = ImageTransform::Create(RecipeSpec(w[1] == "train", false));
    ASSERT_TRUE(t.ok()) << t.status();
    const std::string bytes = ReadBytes(*dir_ + "/" + w[0]);
    std::vector<float> got(3 * 32 * 32);
    ASSERT_TRUE(t->Apply(reinterpret_cast<const uint8_t*>(bytes.data()),
                         bytes.size(), std::stoull(w[2]), got.data())
                    .ok());
    const std::vector<float> want = ReadFloats(w[3]);
    ASSERT_EQ(want.size(), got.size());
    float worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, std::fabs(got[i] - want[i]));
    }
    EXPECT_LT(worst, 1e-5f);
  }
}

// Decoding a large JPEG at a reduced scale is not PIL's full decode and
// resize, but close: the same picture, within a few levels on average.
TEST_F(ImagePilTest, ReducedDecodeStaysClose) {
  int compared = 0;
  for (const auto& w : Lines("transform.txt")) {
    if (w[0] != "big.jpg") continue;
    SCOPED_TRACE(absl::StrJoin(w, " "));
    auto t = ImageTransform::Create(RecipeSpec(w[1] == "train", true));
    ASSERT_TRUE(t.ok());
    const std::string bytes = ReadBytes(*dir_ + "/big.jpg");
    std::vector<float> got(3 * 32 * 32);
    ASSERT_TRUE(t->Apply(reinterpret_cast<const uint8_t*>(bytes.data()),
                         bytes.size(), std::stoull(w[2]), got.data())
                    .ok());
    const std::vector<float> want = ReadFloats(w[3]);
    double sum = 0;
    for (size_t i = 0; i < got.size(); ++i) sum += std::fabs(got[i] - want[i]);
    // Normalized units: 1/255/0.225 ~ 0.0174 per level.
    EXPECT_LT(sum / got.size(), 0.1);
    ++compared;
  }
  EXPECT_GE(compared, 7);
}

}  // namespace
}  // namespace ringleader
