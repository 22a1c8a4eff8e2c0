#include "coordinator/dashboard/access.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/tls_credentials.h"
#include "coordinator/dashboard/html.h"

namespace ringleader::dashboard {
namespace {

// A token may hold any byte; a cookie value may not (RFC 6265): the cookie
// carries it percent-encoded.
std::string CookieValue(absl::string_view token) {
  return PercentEncode(token);
}

bool BearerMatches(absl::string_view token, absl::string_view header) {
  absl::string_view h = absl::StripAsciiWhitespace(header);
  if (!absl::ConsumePrefix(&h, "Bearer ") &&
      !absl::ConsumePrefix(&h, "bearer ")) {
    return false;
  }
  return ConstantTimeEquals(absl::StripAsciiWhitespace(h), token);
}

bool CookieMatches(absl::string_view token, absl::string_view header) {
  const std::string expected = CookieValue(token);
  for (absl::string_view part : absl::StrSplit(header, ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, kTokenCookie) &&
        absl::ConsumePrefix(&part, "=")) {
      if (ConstantTimeEquals(part, expected)) return true;
    }
  }
  return false;
}

}  // namespace

AccessDecision DecideAccess(absl::string_view token, const AccessRequest& r,
                            bool secure) {
  AccessDecision d;
  if (token.empty() || BearerMatches(token, r.authorization) ||
      (!r.has_query_token && CookieMatches(token, r.cookie))) {
    d.kind = AccessDecision::Kind::kAllow;
    return d;
  }
  if (r.has_query_token) {
    if (ConstantTimeEquals(r.query_token, token)) {
      d.kind = AccessDecision::Kind::kRedirectWithCookie;
      d.set_cookie = absl::StrCat(kTokenCookie, "=", CookieValue(token),
                                  "; Path=/; HttpOnly; SameSite=Strict",
                                  secure ? "; Secure" : "");
      // Only a path of this server: "//host/..." would leave it.
      d.location =
          absl::StartsWith(r.path, "/") && !absl::StartsWith(r.path, "//")
              ? r.path
              : "/";
      return d;
    }
    d.why = "the token in ?token= is not the coordinator's";
    return d;
  }
  d.why = r.authorization.empty() && r.cookie.empty()
              ? "this dashboard needs the coordinator's token: open it once "
                "with ?token=TOKEN, or send Authorization: Bearer TOKEN"
              : "the token sent is not the coordinator's";
  return d;
}

}  // namespace ringleader::dashboard
