#include "cli/table.h"

#include <algorithm>

#include "absl/strings/ascii.h"

namespace ringleader::cli {
namespace {

void AppendRow(const std::vector<std::string>& cells,
               const std::vector<size_t>& widths, std::string* out) {
  std::string line;
  for (size_t i = 0; i < widths.size(); ++i) {
    const std::string empty;
    const std::string& cell = i < cells.size() ? cells[i] : empty;
    line += cell;
    if (i + 1 < widths.size()) line.append(widths[i] - cell.size() + 2, ' ');
  }
  absl::StripTrailingAsciiWhitespace(&line);
  *out += line;
  *out += '\n';
}

}  // namespace

std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) widths[i] = header[i].size();
  for (const auto& row : rows) {
    for (size_t i = 0; i < std::min(row.size(), widths.size()); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::string out;
  AppendRow(header, widths, &out);
  for (const auto& row : rows) AppendRow(row, widths, &out);
  return out;
}

std::string FormatKeyValues(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  size_t width = 0;
  for (const auto& [key, value] : pairs) width = std::max(width, key.size());
  std::string out;
  for (const auto& [key, value] : pairs) {
    std::string line = key;
    line.append(width - key.size() + 2, ' ');
    line += value;
    absl::StripTrailingAsciiWhitespace(&line);
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace ringleader::cli
