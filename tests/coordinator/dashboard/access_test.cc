#include "coordinator/dashboard/access.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader::dashboard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Kind = AccessDecision::Kind;

AccessRequest Request() {
  AccessRequest r;
  r.path = "/jobs/mnist-1";
  return r;
}

TEST(AccessTest, WithoutATokenEveryoneReads) {
  EXPECT_EQ(DecideAccess("", Request(), false).kind, Kind::kAllow);
}

TEST(AccessTest, ABearerHeaderWithTheTokenReads) {
  AccessRequest r = Request();
  r.authorization = "Bearer s3cret";
  EXPECT_EQ(DecideAccess("s3cret", r, false).kind, Kind::kAllow);
  r.authorization = "Bearer s3cre";
  const AccessDecision d = DecideAccess("s3cret", r, false);
  EXPECT_EQ(d.kind, Kind::kDeny);
  EXPECT_THAT(d.why, HasSubstr("not the coordinator's"));
}

TEST(AccessTest, NothingSentIsDeniedSayingHowToSendIt) {
  const AccessDecision d = DecideAccess("s3cret", Request(), false);
  EXPECT_EQ(d.kind, Kind::kDeny);
  EXPECT_THAT(d.why, HasSubstr("?token="));
}

TEST(AccessTest, TheQueryTokenSetsACookieAndRedirectsWithoutIt) {
  AccessRequest r = Request();
  r.has_query_token = true;
  r.query_token = "s3 cret;";
  AccessDecision d = DecideAccess("s3 cret;", r, /*secure=*/true);
  ASSERT_EQ(d.kind, Kind::kRedirectWithCookie);
  EXPECT_EQ(d.location, "/jobs/mnist-1");
  EXPECT_EQ(d.set_cookie,
            "ringleader_dashboard_token=s3%20cret%3B; Path=/; HttpOnly; "
            "SameSite=Strict; Secure");
  d = DecideAccess("s3 cret;", r, /*secure=*/false);
  EXPECT_THAT(d.set_cookie, Not(HasSubstr("Secure")));

  // The browser comes back with the cookie.
  AccessRequest next = Request();
  next.cookie = "other=1; ringleader_dashboard_token=s3%20cret%3B";
  EXPECT_EQ(DecideAccess("s3 cret;", next, true).kind, Kind::kAllow);
  next.cookie = "ringleader_dashboard_token=s3%20cret";
  EXPECT_EQ(DecideAccess("s3 cret;", next, true).kind, Kind::kDeny);
}

TEST(AccessTest, AWrongQueryTokenIsDenied) {
  AccessRequest r = Request();
  r.has_query_token = true;
  r.query_token = "guess";
  EXPECT_EQ(DecideAccess("s3cret", r, false).kind, Kind::kDeny);
}

TEST(AccessTest, TheRedirectStaysOnThisServer) {
  AccessRequest r = Request();
  r.has_query_token = true;
  r.query_token = "s3cret";
  r.path = "//evil.example/x";
  EXPECT_EQ(DecideAccess("s3cret", r, false).location, "/");
}

}  // namespace
}  // namespace ringleader::dashboard
