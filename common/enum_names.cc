#include "common/enum_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ringleader {
namespace {

using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;

// "LrScheduleKind" -> "LR_SCHEDULE_KIND_": a word starts at an upper-case
// letter that follows a lower-case letter or a digit.
std::string ValuePrefix(const EnumDescriptor* type) {
  std::string prefix;
  const std::string& name = type->name();
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (i > 0 && absl::ascii_isupper(c) &&
        (absl::ascii_islower(name[i - 1]) ||
         absl::ascii_isdigit(name[i - 1]))) {
      prefix += '_';
    }
    prefix += absl::ascii_toupper(c);
  }
  prefix += '_';
  return prefix;
}

std::string ShortName(const EnumValueDescriptor* value) {
  absl::string_view name = value->name();
  absl::ConsumePrefix(&name, ValuePrefix(value->type()));
  return absl::AsciiStrToLower(name);
}

}  // namespace

std::string EnumValueName(const EnumDescriptor* type, int number) {
  const EnumValueDescriptor* value = type->FindValueByNumber(number);
  if (value == nullptr) return absl::StrCat(number);
  return ShortName(value);
}

std::optional<int> ParseEnumValueName(const EnumDescriptor* type,
                                      absl::string_view name) {
  for (int i = 0; i < type->value_count(); ++i) {
    const EnumValueDescriptor* value = type->value(i);
    if (absl::EqualsIgnoreCase(name, ShortName(value)) ||
        absl::EqualsIgnoreCase(name, value->name())) {
      return value->number();
    }
  }
  return std::nullopt;
}

std::vector<std::string> ChoosableEnumValueNames(const EnumDescriptor* type) {
  std::vector<std::string> names;
  for (int i = 0; i < type->value_count(); ++i) {
    const EnumValueDescriptor* value = type->value(i);
    if (value->number() == 0 && absl::EndsWith(value->name(), "_UNSPECIFIED")) {
      continue;
    }
    names.push_back(ShortName(value));
  }
  return names;
}

}  // namespace ringleader
