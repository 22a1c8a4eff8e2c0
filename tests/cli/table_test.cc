#include "cli/table.h"

#include "gtest/gtest.h"

namespace ringleader::cli {
namespace {

TEST(FormatTableTest, PadsColumnsToWidestCellWithoutTrailingBlanks) {
  EXPECT_EQ(FormatTable({"ID", "STATE", "GEN"},
                        {{"mnist-1", "RUNNING", "2"}, {"a-2", "PENDING", "0"}}),
            "ID       STATE    GEN\n"
            "mnist-1  RUNNING  2\n"
            "a-2      PENDING  0\n");
}

TEST(FormatTableTest, HeaderOnlyWhenNoRows) {
  EXPECT_EQ(FormatTable({"ID", "HOST"}, {}), "ID  HOST\n");
}

TEST(FormatTableTest, ShortRowsGetEmptyCellsAndLongRowsAreCut) {
  EXPECT_EQ(FormatTable({"A", "B", "C"}, {{"x"}, {"1", "2", "3", "4"}}),
            "A  B  C\n"
            "x\n"
            "1  2  3\n");
}

TEST(FormatTableTest, EmptyCellInTheMiddleKeepsAlignment) {
  EXPECT_EQ(FormatTable({"A", "B", "C"}, {{"long", "", "z"}}),
            "A     B  C\n"
            "long     z\n");
}

TEST(FormatKeyValuesTest, PadsKeys) {
  EXPECT_EQ(FormatKeyValues({{"ID", "x-1"}, {"STATE", "RUNNING"}, {"E", ""}}),
            "ID     x-1\n"
            "STATE  RUNNING\n"
            "E\n");
}

}  // namespace
}  // namespace ringleader::cli
