#include "cli/spec_flags.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/spec_flag_table.h"
#include "common/enum_names.h"
#include "common/spec_violations.h"

namespace ringleader::cli {
namespace {

using google::protobuf::FieldDescriptor;

// A table row with its field paths resolved against JobSpec.
struct ResolvedFlag {
  const SpecFlag* row;
  std::vector<FieldPath> fields;
};

// A bad row is a programming error that every test of the flags meets
// first, so it stops the program with the row named.
[[noreturn]] void TableError(const SpecFlag& row, absl::string_view what) {
  std::fprintf(stderr, "ringctl: bad job flag table row %s: %s\n",
               std::string(row.flag).c_str(), std::string(what).c_str());
  std::abort();
}

const std::vector<ResolvedFlag>& ResolvedTable() {
  static const auto* table = [] {
    auto* resolved = new std::vector<ResolvedFlag>;
    for (const SpecFlag& row : SpecFlagTable()) {
      ResolvedFlag flag{&row, {}};
      for (absl::string_view path : absl::StrSplit(row.field, ',')) {
        absl::StatusOr<FieldPath> field =
            ResolveFieldPath(v1::JobSpec::descriptor(), path);
        if (!field.ok()) TableError(row, field.status().message());
        flag.fields.push_back(*std::move(field));
      }
      resolved->push_back(std::move(flag));
    }
    return resolved;
  }();
  return *table;
}

// CLI11 reads integers with base 0 ("010" is 8, "0x10" is 16) and unsigned
// ones through strtoull ("-1" is 2^64-1); a job flag means plain decimal.
CLI::Validator DecimalInteger(bool allow_sign) {
  return CLI::Validator(
      [allow_sign](std::string& value) -> std::string {
        const bool negative = allow_sign && absl::StartsWith(value, "-");
        std::string digits = value.substr(negative ? 1 : 0);
        bool ok = !digits.empty();
        for (char c : digits) ok = ok && absl::ascii_isdigit(c);
        if (!ok) {
          return allow_sign ? "must be a decimal integer"
                            : "must be a non-negative decimal integer";
        }
        // Leading zeros go, so "010" is read as ten, not as octal.
        const size_t first =
            std::min(digits.find_first_not_of('0'), digits.size() - 1);
        value = (negative ? "-" : "") + digits.substr(first);
        return "";
      },
      /*validator_desc=*/"");  // The type name says it: INT, UINT.
}

// Writes a parsed value to every field of its flag, marking each given.
struct Sink {
  const ResolvedFlag* flag;
  SpecOverrides* overrides;

  void MarkGiven(const FieldPath& path) const {
    std::vector<FieldPath>& given = overrides->given;
    if (std::find(given.begin(), given.end(), path) == given.end()) {
      given.push_back(path);
    }
  }
  template <typename T>
  void Set(const T& value) const {
    for (const FieldPath& path : flag->fields) {
      SetField(&overrides->values, path, value);
      MarkGiven(path);
    }
  }
  template <typename T>
  void SetList(const std::vector<T>& values) const {
    for (const FieldPath& path : flag->fields) {
      cli::SetList(&overrides->values, path, values);
      MarkGiven(path);
    }
  }
};

template <typename T>
CLI::Option* AddValue(CLI::App* cmd, const Sink& sink) {
  const SpecFlag& row = *sink.flag->row;
  CLI::Option* opt = cmd->add_option_function<T>(
      std::string(row.flag), [sink](const T& v) { sink.Set(v); },
      std::string(row.help));
  // The last of repeated flags wins, so a script can append an override.
  opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  if constexpr (std::is_integral_v<T>) {
    opt->transform(DecimalInteger(std::is_signed_v<T>));
  }
  return opt;
}

// A comma-separated list that replaces the field's list (as --hidden does).
template <typename T>
CLI::Option* AddList(CLI::App* cmd, const Sink& sink) {
  const SpecFlag& row = *sink.flag->row;
  CLI::Option* opt = cmd->add_option_function<std::vector<T>>(
      std::string(row.flag),
      [sink](const std::vector<T>& v) { sink.SetList(v); },
      std::string(row.help));
  opt->delimiter(',');
  if constexpr (std::is_integral_v<T>) {
    opt->transform(DecimalInteger(std::is_signed_v<T>));
  }
  return opt;
}

// "--flag" or "--flag=true|false"; the row's negation ("--no-shuffle") sets
// false.
CLI::Option* AddBool(CLI::App* cmd, const Sink& sink) {
  const SpecFlag& row = *sink.flag->row;
  std::string names(row.flag);
  if (!row.negation.empty()) absl::StrAppend(&names, ",!", row.negation);
  return cmd
      ->add_flag_function(
          names, [sink](int64_t count) { sink.Set(count > 0); },
          std::string(row.help))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// The enum's value names (common/enum_names.h) as the row spells them, in
// any case.
CLI::Option* AddEnum(CLI::App* cmd, const Sink& sink) {
  const SpecFlag& row = *sink.flag->row;
  const google::protobuf::EnumDescriptor* type =
      sink.flag->fields.front().back()->enum_type();
  std::vector<std::string> keys;
  std::map<std::string, int32_t> by_key;
  for (const std::string& name : ChoosableEnumValueNames(type)) {
    keys.push_back(FlagValueName(row, name));
    by_key[keys.back()] = *ParseEnumValueName(type, name);
  }
  return cmd
      ->add_option_function<std::string>(
          std::string(row.flag),
          [sink, by_key](const std::string& v) {
            // IsMember below has admitted only these names.
            sink.Set(by_key.at(absl::AsciiStrToLower(v)));
          },
          std::string(row.help))
      ->check(CLI::IsMember(keys, CLI::ignore_case))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls `add(TypeTag<T>{})` with the C++ type of a number or string field;
// nullptr for other types.
template <typename F>
CLI::Option* ForNumberOrString(FieldDescriptor::CppType type, F add) {
  using D = FieldDescriptor;
  switch (type) {
    case D::CPPTYPE_INT32:
      return add(TypeTag<int32_t>{});
    case D::CPPTYPE_INT64:
      return add(TypeTag<int64_t>{});
    case D::CPPTYPE_UINT32:
      return add(TypeTag<uint32_t>{});
    case D::CPPTYPE_UINT64:
      return add(TypeTag<uint64_t>{});
    case D::CPPTYPE_FLOAT:
      return add(TypeTag<float>{});
    case D::CPPTYPE_DOUBLE:
      return add(TypeTag<double>{});
    case D::CPPTYPE_STRING:
      return add(TypeTag<std::string>{});
    default:
      return nullptr;
  }
}

// The option for the field's type; a row that no option suits is an error.
CLI::Option* AddFlag(CLI::App* cmd, const Sink& sink) {
  const FieldDescriptor* field = sink.flag->fields.front().back();
  if (!field->is_repeated()) {
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_BOOL) {
      return AddBool(cmd, sink);
    }
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
      return AddEnum(cmd, sink);
    }
  }
  CLI::Option* opt = ForNumberOrString(field->cpp_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return field->is_repeated() ? AddList<T>(cmd, sink)
                                : AddValue<T>(cmd, sink);
  });
  if (opt == nullptr) TableError(*sink.flag->row, "no flag sets its type");
  return opt;
}

}  // namespace

void AddSpecFlags(CLI::App* command, SpecOverrides* overrides) {
  const std::vector<ResolvedFlag>& table = ResolvedTable();
  std::map<FieldPath, CLI::Option*> single;  // A field's own flag.
  for (const ResolvedFlag& flag : table) {
    CLI::Option* opt = AddFlag(command, Sink{&flag, overrides});
    if (flag.fields.size() == 1) {
      single.emplace(flag.fields.front(), opt);
    } else {
      // A shorthand (--workers) cannot be given with the flags it stands for.
      for (const FieldPath& path : flag.fields) {
        auto it = single.find(path);
        if (it == single.end()) {
          TableError(*flag.row, "a shorthand follows the flags it sets");
        }
        opt->excludes(it->second);
      }
    }
    opt->group(std::string(flag.row->group));
  }
}

void ApplySpecOverrides(const SpecOverrides& overrides, v1::JobSpec* spec) {
  for (const FieldPath& path : overrides.given) {
    CopyField(overrides.values, spec, path);
  }
}

std::string FlagForField(absl::string_view field_path) {
  // "model.hidden_sizes[3]" is set by the same flag as the whole list.
  const absl::string_view path = field_path.substr(0, field_path.find('['));
  for (const ResolvedFlag& flag : ResolvedTable()) {
    for (const FieldPath& field : flag.fields) {
      if (FieldPathName(field) == path) return std::string(flag.row->flag);
    }
    // The validator names a whole split or the transform when it does not
    // belong to the format: the flag that starts it.
    if (flag.row->starts == path) return std::string(flag.row->flag);
  }
  return "";
}

namespace {

std::string LineWithFlagHint(absl::string_view line) {
  absl::string_view rest = line;
  if (!absl::ConsumePrefix(&rest, kInvalidSpecPrefix)) return std::string(line);
  const std::string flag = FlagForField(rest.substr(0, rest.find(' ')));
  if (flag.empty()) return std::string(line);
  return absl::StrCat(line, " (flag ", flag, ")");
}

}  // namespace

std::string WithFlagHint(absl::string_view message) {
  // The validator lists every violation, one per line: each gets its hint.
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(message, '\n')) {
    lines.push_back(LineWithFlagHint(line));
  }
  return absl::StrJoin(lines, "\n");
}

}  // namespace ringleader::cli
