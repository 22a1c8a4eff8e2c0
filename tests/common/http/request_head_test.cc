#include "common/http/request_head.h"

#include "gtest/gtest.h"

namespace ringleader::http {
namespace {

using Kind = RequestProgress::Kind;

TEST(RequestHeadTest, WholeOnlyOnceTheHeadAndItsBodyArrived) {
  const RequestLimits limits;
  EXPECT_EQ(CheckRequest("", limits).kind, Kind::kIncomplete);
  EXPECT_EQ(CheckRequest("GET /metrics HTTP/1.1\r\nHost: x\r\n", limits).kind,
            Kind::kIncomplete);
  const std::string get = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  RequestProgress p = CheckRequest(get, limits);
  EXPECT_EQ(p.kind, Kind::kComplete);
  EXPECT_EQ(p.bytes, get.size());
  // A second request behind it is not part of this one.
  EXPECT_EQ(CheckRequest(get + get, limits).bytes, get.size());
  const std::string post = "POST /x HTTP/1.1\r\ncontent-length: 5\r\n\r\n";
  EXPECT_EQ(CheckRequest(post + "abc", limits).kind, Kind::kIncomplete);
  p = CheckRequest(post + "abcdeFGH", limits);
  EXPECT_EQ(p.kind, Kind::kComplete);
  EXPECT_EQ(p.bytes, post.size() + 5);
}

TEST(RequestHeadTest, LimitsAndBadLengthsAreAnsweredWithTheirStatus) {
  RequestLimits limits;
  limits.max_head_bytes = 64;
  limits.max_body_bytes = 10;
  RequestProgress p = CheckRequest(std::string(65, 'a'), limits);
  EXPECT_EQ(p.kind, Kind::kTooLarge);
  EXPECT_EQ(p.status, 431);
  p = CheckRequest("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n", limits);
  EXPECT_EQ(p.kind, Kind::kTooLarge);
  EXPECT_EQ(p.status, 413);
  for (const char* bad :
       {"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"}) {
    p = CheckRequest(bad, limits);
    EXPECT_EQ(p.kind, Kind::kBad) << bad;
    EXPECT_EQ(p.status, 400) << bad;
  }
  // A length past what size_t holds is refused, not wrapped.
  p = CheckRequest(
      "POST / HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n",
      limits);
  EXPECT_EQ(p.kind, Kind::kTooLarge);
}

}  // namespace
}  // namespace ringleader::http
