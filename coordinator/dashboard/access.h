#ifndef RINGLEADER_COORDINATOR_DASHBOARD_ACCESS_H_
#define RINGLEADER_COORDINATOR_DASHBOARD_ACCESS_H_

// Who may read the dashboard: with a token configured (the coordinator's
// --auth_token_file, the API's token), a request must carry it, as
// "Authorization: Bearer <token>" (curl, scripts) or in the cookie a
// browser got by opening any page once with "?token=<token>". That first
// request is answered with the cookie and a redirect to the same page
// without the query, so the token does not stay in the address bar or the
// history. Pure; thread-safe.

#include <string>

#include "absl/strings/string_view.h"

namespace ringleader::dashboard {

inline constexpr char kTokenCookie[] = "ringleader_dashboard_token";

struct AccessRequest {
  std::string authorization;  // The Authorization header.
  std::string cookie;         // The Cookie header.
  std::string query_token;    // ?token=, decoded; empty: none.
  bool has_query_token = false;
  std::string path;  // Without the query.
};

struct AccessDecision {
  enum class Kind { kAllow, kRedirectWithCookie, kDeny };
  Kind kind = Kind::kDeny;
  std::string set_cookie;  // kRedirectWithCookie: the Set-Cookie value.
  std::string location;    // kRedirectWithCookie: where to.
  std::string why;         // kDeny: said in the 401 answer.
};

// `token` empty: everyone may read. `secure`: the server speaks HTTPS, so
// the cookie is marked Secure. Tokens are compared in constant time.
AccessDecision DecideAccess(absl::string_view token, const AccessRequest& r,
                            bool secure);

}  // namespace ringleader::dashboard

#endif  // RINGLEADER_COORDINATOR_DASHBOARD_ACCESS_H_
