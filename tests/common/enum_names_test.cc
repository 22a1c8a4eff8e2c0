#include "common/enum_names.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/user_service.pb.h"

namespace ringleader {
namespace {

using google::protobuf::EnumDescriptor;
using ::testing::ElementsAre;

TEST(EnumNamesTest, LowerCaseWithoutTheTypePrefix) {
  EXPECT_EQ(EnumValueName(v1::MODEL_ARCH_TORCHSCRIPT), "torchscript");
  EXPECT_EQ(EnumValueName(v1::JOB_STATE_RUNNING), "running");
  EXPECT_EQ(EnumValueName(v1::LR_SCHEDULE_KIND_COSINE), "cosine");
  EXPECT_EQ(EnumValueName(v1::TASK_KIND_LANGUAGE_MODEL), "language_model");
  EXPECT_EQ(EnumValueName(v1::PRECISION_BF16_MIXED), "bf16_mixed");
  EXPECT_EQ(EnumValueName(v1::WORKER_STATE_SILENT), "silent");
  EXPECT_EQ(EnumValueName(v1::MODEL_ARCH_UNSPECIFIED), "unspecified");
}

TEST(EnumNamesTest, AnUndefinedValueIsItsNumber) {
  EXPECT_EQ(EnumValueName(static_cast<v1::JobState>(99)), "99");
  EXPECT_EQ(EnumValueName(v1::JobState_descriptor(), -3), "-3");
}

TEST(EnumNamesTest, ParsesShortAndFullNamesInAnyCase) {
  const EnumDescriptor* arch = v1::ModelArch_descriptor();
  EXPECT_EQ(ParseEnumValueName(arch, "mlp"), v1::MODEL_ARCH_MLP);
  EXPECT_EQ(ParseEnumValueName(arch, "TorchScript"),
            v1::MODEL_ARCH_TORCHSCRIPT);
  EXPECT_EQ(ParseEnumValueName(arch, "MODEL_ARCH_CNN"), v1::MODEL_ARCH_CNN);
  EXPECT_EQ(ParseEnumValueName(arch, "model_arch_cnn"), v1::MODEL_ARCH_CNN);
  EXPECT_EQ(ParseEnumValueName(arch, "resnet"), std::nullopt);
  EXPECT_EQ(ParseEnumValueName(arch, ""), std::nullopt);
  EXPECT_EQ(ParseEnumValueName(arch, "ARCH_MLP"), std::nullopt);
}

TEST(EnumNamesTest, ChoosableNamesLeaveOutUnspecifiedOnly) {
  EXPECT_THAT(ChoosableEnumValueNames(v1::ModelArch_descriptor()),
              ElementsAre("mlp", "cnn", "torchscript"));
  // A zero value with a meaning of its own is a choice.
  EXPECT_THAT(ChoosableEnumValueNames(v1::CpuTransport_descriptor()),
              ElementsAre("auto", "gloo", "shm"));
  EXPECT_THAT(ChoosableEnumValueNames(v1::GradientCompression_descriptor()),
              ElementsAre("none", "fp16", "bf16"));
}

// Every enum of the API follows the style guide's prefix, so no name keeps
// a stray prefix, and every name reads back as its value.
void ExpectRoundTrips(const google::protobuf::FileDescriptor* file) {
  for (int t = 0; t < file->enum_type_count(); ++t) {
    const EnumDescriptor* type = file->enum_type(t);
    for (int v = 0; v < type->value_count(); ++v) {
      const int number = type->value(v)->number();
      const std::string name = EnumValueName(type, number);
      SCOPED_TRACE(type->value(v)->name());
      // The prefix was taken off: the name is not the whole one.
      EXPECT_TRUE(absl::EndsWith(type->value(v)->name(),
                                 "_" + absl::AsciiStrToUpper(name)));
      EXPECT_EQ(ParseEnumValueName(type, name), number);
    }
  }
}

TEST(EnumNamesTest, EveryApiEnumRoundTrips) {
  ExpectRoundTrips(v1::JobSpec::descriptor()->file());
  ExpectRoundTrips(v1::WorkerInfo::descriptor()->file());
}

}  // namespace
}  // namespace ringleader
