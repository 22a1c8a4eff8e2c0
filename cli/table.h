#ifndef RINGLEADER_CLI_TABLE_H_
#define RINGLEADER_CLI_TABLE_H_

// Plain-text tables for terminals: columns padded to their widest cell and
// separated by two spaces, no trailing blanks, one row per line ending in
// "\n". Cells are measured in bytes (ids, states and hostnames are ASCII).
// Pure functions; thread-safe.

#include <string>
#include <utility>
#include <vector>

namespace ringleader::cli {

// `header` then `rows`. A row shorter than the header gets empty cells; a
// longer one is cut to the header's width.
std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// "KEY   value" lines with the keys padded to the longest.
std::string FormatKeyValues(
    const std::vector<std::pair<std::string, std::string>>& pairs);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_TABLE_H_
