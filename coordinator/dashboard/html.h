#ifndef RINGLEADER_COORDINATOR_DASHBOARD_HTML_H_
#define RINGLEADER_COORDINATOR_DASHBOARD_HTML_H_

// The pieces every dashboard page is made of: escaping, and the page shell
// (title, navigation, the inline style, the refresh). Pure functions;
// thread-safe.

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ringleader::dashboard {

// `text` safe inside an element or a quoted attribute: & < > " ' escaped.
// Every string a user or a worker chose (job names, log lines, reasons,
// host names) goes through this.
std::string Escape(absl::string_view text);

// "2026-12-06 16:10:09 UTC"; "-" for the zero time or absl::InfinitePast().
std::string FormatUtc(absl::Time t);
// A Unix time in milliseconds, as above ("-" for 0).
std::string FormatUnixMillis(int64_t ms);
// "%.4g" of `v`, or "-" when it is not finite.
std::string FormatNumber(double v);

// `text` percent-encoded but for the unreserved [A-Za-z0-9._~-] (RFC 3986):
// safe in a URL path segment and in a cookie value alike.
std::string PercentEncode(absl::string_view text);

// The job page's path, "/jobs/<id>", the id percent-encoded.
std::string JobPath(absl::string_view job_id);
// `<a href="/jobs/<id>">id</a>`.
std::string JobLink(absl::string_view job_id);

// A whole page: `title` (escaped here) and `body` (HTML as given). With
// `refresh_seconds` > 0 the page reloads itself that often (a meta
// refresh: same origin, no script).
std::string Page(absl::string_view title, absl::string_view body,
                 int refresh_seconds);

}  // namespace ringleader::dashboard

#endif  // RINGLEADER_COORDINATOR_DASHBOARD_HTML_H_
