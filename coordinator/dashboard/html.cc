#include "coordinator/dashboard/html.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ringleader::dashboard {
namespace {

// Inline, so that the page makes no request beyond itself.
constexpr char kStyle[] = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
nav{background:#263238;padding:8px 16px}nav a{color:#fff;margin-right:16px;text-decoration:none}
main{padding:12px 16px}h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:18px 0 6px}
table{border-collapse:collapse;background:#fff}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eceff1}.num{text-align:right;font-variant-numeric:tabular-nums}
.state{font-weight:600}.state-succeeded{color:#2e7d32}.state-failed{color:#c62828}.state-running{color:#1565c0}
.waiting{background:#fff3e0;border-left:4px solid #ef6c00;padding:6px 10px;margin:8px 0}
.charts{display:flex;flex-wrap:wrap;gap:12px}figure.chart{margin:0;background:#fff;border:1px solid #ddd;padding:6px}
figcaption{font-weight:600;margin-bottom:2px}.legend span{margin-right:10px}
pre.log{background:#111;color:#ddd;padding:6px;max-height:260px;overflow:auto;font-size:12px;margin:0 0 8px}
.muted{color:#777}
)css";

}  // namespace

std::string Escape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string FormatUtc(absl::Time t) {
  if (t == absl::InfinitePast() || t == absl::UnixEpoch()) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone());
}

std::string FormatUnixMillis(int64_t ms) {
  if (ms <= 0) return "-";
  return FormatUtc(absl::FromUnixMillis(ms));
}

std::string FormatNumber(double v) {
  if (!std::isfinite(v)) return "-";
  // Whole numbers with thousands separators from 1,000 up ("64,860", not
  // "6.486e+04"): a rate or a step count is read as a count.
  if (std::abs(v) >= 1000) {
    const std::string digits = absl::StrFormat("%.0f", std::round(std::abs(v)));
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return v < 0 ? "-" + out : out;
  }
  // Four significant digits below, e-notation only for the very small.
  if (v != 0 && std::abs(v) < 1e-3) return absl::StrFormat("%.2e", v);
  return absl::StrFormat("%.4g", v);
}

std::string PercentEncode(absl::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '~' ||
        c == '-') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  return out;
}

std::string JobPath(absl::string_view job_id) {
  return absl::StrCat("/jobs/", PercentEncode(job_id));
}

std::string JobLink(absl::string_view job_id) {
  return absl::StrCat("<a href=\"", Escape(JobPath(job_id)), "\">",
                      Escape(job_id), "</a>");
}

std::string Page(absl::string_view title, absl::string_view body,
                 int refresh_seconds) {
  std::string refresh;
  if (refresh_seconds > 0) {
    refresh = absl::StrCat("<meta http-equiv=\"refresh\" content=\"",
                           refresh_seconds, "\">");
  }
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
      refresh, "<title>", Escape(title), " - Ringleader</title><style>", kStyle,
      "</style></head><body><nav><a href=\"/jobs\">Jobs</a>"
      "<a href=\"/workers\">Workers</a></nav><main>",
      body, "</main></body></html>\n");
}

}  // namespace ringleader::dashboard
