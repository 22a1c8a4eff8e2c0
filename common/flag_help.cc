#include "common/flag_help.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ringleader {
namespace {

// Flag names, then help, aligned at this column so a group reads as a table.
constexpr size_t kHelpColumn = 34;

bool DefinedUnder(const absl::CommandLineFlag& flag,
                  absl::Span<const std::string> prefixes) {
  std::string file = flag.Filename();
  if (absl::StartsWith(file, "./")) file.erase(0, 2);
  return std::any_of(
      prefixes.begin(), prefixes.end(),
      [&](const std::string& p) { return absl::StartsWith(file, p); });
}

std::string DefaultShown(const absl::CommandLineFlag& flag) {
  std::string value = flag.DefaultValue();
  if (value.empty() && flag.IsOfType<std::string>()) return "\"\"";
  return value;
}

// One line: "  --name=DEFAULT  help", the help text never wrapped.
std::string FlagLine(absl::string_view name) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr) return absl::StrCat("  --", name, "  (no such flag)\n");
  std::string left = absl::StrCat("  --", name, "=", DefaultShown(*flag));
  left.append(left.size() + 2 <= kHelpColumn ? kHelpColumn - left.size() : 2,
              ' ');
  return absl::StrCat(left, flag->Help(), "\n");
}

void AppendGroup(std::string& out, absl::string_view title,
                 absl::Span<const std::string> names) {
  absl::StrAppend(&out, "\n", title, ":\n");
  for (const std::string& name : names) out += FlagLine(name);
}

}  // namespace

std::vector<std::string> UngroupedFlags(
    absl::Span<const FlagGroup> groups,
    absl::Span<const std::string> source_prefixes) {
  std::set<std::string> listed;
  for (const FlagGroup& g : groups)
    listed.insert(g.flags.begin(), g.flags.end());
  std::vector<std::string> ungrouped;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (DefinedUnder(*flag, source_prefixes) &&
        !listed.count(std::string(name))) {
      ungrouped.emplace_back(name);
    }
  }
  std::sort(ungrouped.begin(), ungrouped.end());
  return ungrouped;
}

std::string FlagHelp(absl::string_view usage,
                     absl::Span<const FlagGroup> groups,
                     absl::Span<const std::string> source_prefixes) {
  std::string out =
      absl::StrCat(usage, "\nBuild: ", BuildModeDescription(), "\n");
  for (const FlagGroup& g : groups) AppendGroup(out, g.title, g.flags);
  std::vector<std::string> other = UngroupedFlags(groups, source_prefixes);
  if (!other.empty()) AppendGroup(out, "Other", other);
  absl::StrAppend(&out,
                  "\n--helpfull lists every flag, the libraries' included.\n");
  return out;
}

bool WantsFlagHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") return false;  // What follows is not a flag.
    for (absl::string_view help :
         {"-h", "-help", "--help", "-helpshort", "--helpshort"}) {
      if (arg == help) return true;
    }
  }
  return false;
}

std::string BuildModeDescription() {
#if defined(__OPTIMIZE__) && defined(NDEBUG)
  return "optimized (-c opt)";
#elif defined(__OPTIMIZE__)
  return "optimized, with assertions";
#else
  return "UNOPTIMIZED (-O0 fastbuild, as tests build): for real jobs build "
         "with Bazel's default -c opt";
#endif
}

}  // namespace ringleader
