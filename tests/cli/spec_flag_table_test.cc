// The job flag table against JobSpec: every field has a row or is listed
// as file-only, and every row is one that AddSpecFlags can register.
#include "cli/spec_flag_table.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/spec_field_path.h"
#include "common/enum_names.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader::cli {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> RowFields(const SpecFlag& row) {
  return absl::StrSplit(row.field, ',');
}

bool SetByARow(absl::Span<const SpecFlag> rows, const std::string& path) {
  for (const SpecFlag& row : rows) {
    for (const std::string& field : RowFields(row)) {
      if (field == path) return true;
    }
  }
  return false;
}

bool IsFileOnly(absl::Span<const FileOnlyField> file_only,
                const std::string& path) {
  for (const FileOnlyField& f : file_only) {
    if (f.field == path) return true;
  }
  return false;
}

// The fields under `d` that no row sets and no file-only entry covers (an
// entry may name a whole sub-message). Singular sub-messages are walked
// into; a list of messages or a map is one field that a flag cannot set.
std::vector<std::string> FieldsWithoutFlag(
    const Descriptor* d, absl::Span<const SpecFlag> rows,
    absl::Span<const FileOnlyField> file_only, const std::string& prefix = "") {
  std::vector<std::string> missing;
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string path = prefix + f->name();
    if (IsFileOnly(file_only, path)) continue;
    if (f->message_type() != nullptr && !f->is_repeated()) {
      for (std::string& sub :
           FieldsWithoutFlag(f->message_type(), rows, file_only, path + ".")) {
        missing.push_back(std::move(sub));
      }
    } else if (!SetByARow(rows, path)) {
      missing.push_back(path);
    }
  }
  return missing;
}

TEST(SpecFlagTableTest, EveryJobSpecFieldHasARowOrIsFileOnly) {
  EXPECT_THAT(FieldsWithoutFlag(v1::JobSpec::descriptor(), SpecFlagTable(),
                                FileOnlySpecFields()),
              IsEmpty())
      << "give each a row in cli/spec_flag_table.cc, or list it in "
         "kFileOnlyFields with the reason";
}

TEST(SpecFlagTableTest, TheCheckFindsAFieldWithoutARow) {
  std::vector<SpecFlag> rows;
  for (const SpecFlag& row : SpecFlagTable()) {
    if (row.flag != "--lr" && row.flag != "--hidden") rows.push_back(row);
  }
  EXPECT_THAT(FieldsWithoutFlag(v1::JobSpec::descriptor(), rows, {}),
              ElementsAre("model.hidden_sizes", "optimizer.learning_rate"));
  // A file-only entry covers a field, or a whole sub-message.
  const FileOnlyField file_only[] = {{"optimizer.learning_rate", "test"},
                                     {"model", "test"}};
  EXPECT_THAT(FieldsWithoutFlag(v1::JobSpec::descriptor(), rows, file_only),
              IsEmpty());
}

TEST(SpecFlagTableTest, FileOnlyEntriesAreFieldsWithoutARowWithAReason) {
  for (const FileOnlyField& f : FileOnlySpecFields()) {
    SCOPED_TRACE(f.field);
    EXPECT_TRUE(ResolveFieldPath(v1::JobSpec::descriptor(), f.field).ok());
    EXPECT_FALSE(SetByARow(SpecFlagTable(), std::string(f.field)));
    EXPECT_FALSE(f.reason.empty());
  }
}

// What AddSpecFlags registers: a scalar or a list of scalars (not of
// enums), and the optional columns only where they mean something.
TEST(SpecFlagTableTest, EveryRowSetsAScalarOrAList) {
  for (const SpecFlag& row : SpecFlagTable()) {
    SCOPED_TRACE(row.flag);
    EXPECT_TRUE(absl::StartsWith(row.flag, "--"));
    EXPECT_FALSE(row.group.empty());
    EXPECT_FALSE(row.help.empty());
    const FieldDescriptor::CppType first_type =
        ResolveFieldPath(v1::JobSpec::descriptor(), RowFields(row).front())
            .value()
            .back()
            ->cpp_type();
    for (const std::string& path : RowFields(row)) {
      absl::StatusOr<FieldPath> field =
          ResolveFieldPath(v1::JobSpec::descriptor(), path);
      ASSERT_TRUE(field.ok()) << field.status();
      const FieldDescriptor* leaf = field->back();
      EXPECT_NE(leaf->cpp_type(), FieldDescriptor::CPPTYPE_MESSAGE);
      EXPECT_EQ(leaf->cpp_type(), first_type);  // One value for them all.
      if (leaf->is_repeated()) {
        EXPECT_NE(leaf->cpp_type(), FieldDescriptor::CPPTYPE_ENUM);
        EXPECT_NE(leaf->cpp_type(), FieldDescriptor::CPPTYPE_BOOL);
      }
    }
    if (!row.negation.empty()) {
      EXPECT_EQ(first_type, FieldDescriptor::CPPTYPE_BOOL);
    }
    if (!row.spellings.empty()) {
      EXPECT_EQ(first_type, FieldDescriptor::CPPTYPE_ENUM);
    }
    if (!row.starts.empty()) {
      EXPECT_TRUE(absl::StartsWith(row.field, absl::StrCat(row.starts, ".")));
    }
  }
}

TEST(SpecFlagTableTest, FlagsAreUniqueAndAFieldHasOneFlagOfItsOwn) {
  std::set<absl::string_view> flags;
  std::set<absl::string_view> fields;
  for (const SpecFlag& row : SpecFlagTable()) {
    EXPECT_TRUE(flags.insert(row.flag).second) << row.flag;
    if (!row.negation.empty()) {
      EXPECT_TRUE(flags.insert(row.negation).second) << row.negation;
    }
    if (!absl::StrContains(row.field, ',')) {
      EXPECT_TRUE(fields.insert(row.field).second) << row.field;
    }
  }
  // A shorthand stands for flags that exist.
  for (const SpecFlag& row : SpecFlagTable()) {
    for (const std::string& path : RowFields(row)) {
      EXPECT_EQ(fields.count(path), 1u) << row.flag << " " << path;
    }
  }
}

TEST(SpecFlagTableTest, FlagValueNameAppliesTheSpelling) {
  const SpecFlag row = {"--x", "precision", "G", "h", "", "bf16=bf16_mixed"};
  EXPECT_EQ(FlagValueName(row, "bf16_mixed"), "bf16");
  EXPECT_EQ(FlagValueName(row, "fp32"), "fp32");
}

// An enum flag's help starts with the names it takes, so a value added to
// the enum shows up there too.
TEST(SpecFlagTableTest, EnumHelpListsTheChoices) {
  for (const SpecFlag& row : SpecFlagTable()) {
    const FieldDescriptor* leaf =
        ResolveFieldPath(v1::JobSpec::descriptor(), RowFields(row).front())
            .value()
            .back();
    if (leaf->enum_type() == nullptr) continue;
    std::vector<std::string> names;
    for (const std::string& name : ChoosableEnumValueNames(leaf->enum_type())) {
      names.push_back(FlagValueName(row, name));
    }
    EXPECT_TRUE(absl::StartsWith(row.help, absl::StrJoin(names, "|")))
        << row.flag << ": " << row.help;
  }
}

}  // namespace
}  // namespace ringleader::cli
