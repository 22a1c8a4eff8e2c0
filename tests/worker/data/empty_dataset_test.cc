#include "worker/data/empty_dataset.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/data/dataset.h"

namespace ringleader {
namespace {

using ::testing::ElementsAre;
using ::testing::StartsWith;

TEST(EmptyDatasetTest, HasTheFieldsButNoSamples) {
  const EmptyDataset ds({FieldShape{ElementType::kFloat32, {3, 4}}},
                        FieldShape{ElementType::kInt64, {}},
                        "test split (none given)");
  EXPECT_EQ(ds.size(), 0);
  EXPECT_THAT(ds.input_fields(),
              ElementsAre(FieldShape{ElementType::kFloat32, {3, 4}}));
  EXPECT_EQ(ds.target_field(), (FieldShape{ElementType::kInt64, {}}));
  EXPECT_EQ(ds.num_classes(), 0);
  EXPECT_EQ(ds.Describe(), "test split (none given)");
  EXPECT_TRUE(ds.GatherFields(nullptr, 0, {nullptr}, nullptr).ok());
  const int64_t index = 0;
  const absl::Status s = ds.GatherFields(&index, 1, {nullptr}, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("test split (none given): "));
}

}  // namespace
}  // namespace ringleader
