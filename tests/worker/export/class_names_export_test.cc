#include "worker/export/class_names_export.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace ringleader {
namespace {

TEST(ClassNamesExportTest, BesideTheModelWithoutItsExtension) {
  v1::ExportSpec spec;
  spec.set_torchscript_path("/out/trained.pt");
  EXPECT_EQ(ClassNamesPath(spec), "/out/trained.classes.json");
  spec.set_torchscript_path("/out.d/model");
  EXPECT_EQ(ClassNamesPath(spec), "/out.d/model.classes.json");
  spec.clear_torchscript_path();
  spec.set_safetensors_path("/out/w.safetensors");
  EXPECT_EQ(ClassNamesPath(spec), "/out/w.classes.json");
  EXPECT_EQ(ClassNamesPath(v1::ExportSpec()), "");
}

TEST(ClassNamesExportTest, JsonEscapesWhatJsonMust) {
  EXPECT_EQ(ClassNamesJson({"cat", "a \"b\"\\c", std::string("x\n", 2)}),
            "[\"cat\", \"a \\\"b\\\"\\\\c\", \"x\\u000a\"]\n");
}

TEST(ClassNamesExportTest, WritesTheFileOrNothing) {
  v1::ExportSpec spec;
  spec.set_torchscript_path(::testing::TempDir() + "/m.pt");
  ASSERT_TRUE(ExportClassNames({"0-a", "1-b"}, spec).ok());
  std::ifstream in(::testing::TempDir() + "/m.classes.json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "[\"0-a\", \"1-b\"]\n");
  EXPECT_TRUE(ExportClassNames({}, spec).ok());
  EXPECT_TRUE(ExportClassNames({"a"}, v1::ExportSpec()).ok());
  spec.set_torchscript_path("/nonexistent/dir/m.pt");
  EXPECT_FALSE(ExportClassNames({"a"}, spec).ok());
}

}  // namespace
}  // namespace ringleader
