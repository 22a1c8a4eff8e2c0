#include "coordinator/dashboard/html.h"

#include <limits>

#include "coordinator/dashboard/state_names.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringleader::dashboard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(HtmlTest, EscapeCoversTextAndQuotedAttributes) {
  EXPECT_EQ(Escape("<a href=\"x\" title='y'>&</a>"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  EXPECT_EQ(Escape("plain"), "plain");
}

TEST(HtmlTest, JobPathsArePercentEncoded) {
  EXPECT_EQ(JobPath("mnist-mlp-1"), "/jobs/mnist-mlp-1");
  EXPECT_EQ(JobPath("a b/<c>"), "/jobs/a%20b%2F%3Cc%3E");
  EXPECT_EQ(JobLink("x\"<y"), "<a href=\"/jobs/x%22%3Cy\">x&quot;&lt;y</a>");
}

TEST(HtmlTest, PagesRefreshOnlyWhenAsked) {
  EXPECT_THAT(Page("t", "<p>b</p>", 2),
              HasSubstr("<meta http-equiv=\"refresh\" content=\"2\">"));
  EXPECT_THAT(Page("t", "<p>b</p>", 0), Not(HasSubstr("refresh")));
  EXPECT_THAT(Page("<script>", "", 0), HasSubstr("<title>&lt;script&gt;"));
}

TEST(HtmlTest, PagesLoadNothingFromElsewhere) {
  const std::string page = Page("t", "", 2);
  EXPECT_THAT(page, Not(HasSubstr("http://")));
  EXPECT_THAT(page, Not(HasSubstr("https://")));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, Not(HasSubstr("<link")));
}

TEST(HtmlTest, NumbersAndTimes) {
  EXPECT_EQ(FormatNumber(0.123456), "0.1235");
  // Issue 49: a count is read as one, never in e-notation.
  EXPECT_EQ(FormatNumber(64860.4), "64,860");
  EXPECT_EQ(FormatNumber(1052), "1,052");
  EXPECT_EQ(FormatNumber(-1234567.0), "-1,234,567");
  EXPECT_EQ(FormatNumber(999.94), "999.9");
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(0.00012), "1.20e-04");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::quiet_NaN()), "-");
  EXPECT_EQ(FormatUnixMillis(0), "-");
  EXPECT_EQ(FormatUnixMillis(1000), "1970-01-01 00:00:01 UTC");
}

TEST(HtmlTest, StatesAreUpperCaseWithAClassPerState) {
  EXPECT_EQ(JobStateSpan(v1::JOB_STATE_SUCCEEDED),
            "<span class=\"state state-succeeded\" data-state=\"SUCCEEDED\">"
            "SUCCEEDED</span>");
  EXPECT_EQ(WorkerStateText(v1::WORKER_STATE_BUSY), "BUSY");
}

}  // namespace
}  // namespace ringleader::dashboard
