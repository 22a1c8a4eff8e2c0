// The dashboard in a real browser: headless Chromium opens a job's page on
// a real coordinator while two real workers train it, sees the loss curve
// gain points between two loads, and sees the job end SUCCEEDED. Skips,
// saying why, where Chromium is not installed (scripts/setup.sh installs
// Debian's chromium). Each load is a fresh page: what a user's browser
// shows after its refresh.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/cluster.h"
#include "worker/data/png_decoder.h"

namespace ringleader::testing {
namespace {

constexpr char kChromium[] = "/usr/bin/chromium";

// A job of a few hundred steps on two ranks, reporting every 50 ms: long
// enough to be seen running, short enough for a test.
v1::JobSpec Spec() {
  v1::JobSpec s;
  s.set_name("dashboard");
  s.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  s.mutable_model()->add_hidden_sizes(256);
  s.mutable_model()->add_hidden_sizes(256);
  s.mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  s.mutable_dataset()->set_synthetic_train_size(24000);
  s.mutable_dataset()->set_synthetic_test_size(200);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.05);
  s.set_epochs(3);
  s.set_batch_size(16);
  s.set_min_workers(2);
  s.set_max_workers(2);
  s.set_seed(5);
  s.set_evaluate_every_epoch(true);
  s.set_progress_min_interval_ms(50);
  return s;
}

// What the browser shows of a job page.
struct Seen {
  int loss_points = -1;  // -1: no loss chart.
  std::string state;
};

std::optional<std::string> AttributeAfter(const std::string& dom,
                                          const std::string& anchor,
                                          const std::string& attribute) {
  const size_t at = dom.find(anchor);
  if (at == std::string::npos) return std::nullopt;
  const std::string key = attribute + "=\"";
  const size_t start = dom.find(key, at);
  if (start == std::string::npos) return std::nullopt;
  const size_t end = dom.find('"', start + key.size());
  return dom.substr(start + key.size(), end - start - key.size());
}

Seen Parse(const std::string& dom) {
  Seen seen;
  int n = 0;
  std::optional<std::string> points =
      AttributeAfter(dom, "id=\"chart-loss\"", "data-points");
  if (points.has_value() && absl::SimpleAtoi(*points, &n)) seen.loss_points = n;
  seen.state =
      AttributeAfter(dom, "id=\"job-state\"", "data-state").value_or("");
  return seen;
}

class Browser {
 public:
  explicit Browser(std::string dir) : dir_(std::move(dir)) {}

  std::vector<std::string> Argv(const std::string& url) const {
    // As root Chromium's sandbox cannot start; the page is our own.
    return {kChromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--user-data-dir=" + dir_ + "/profile",
            url};
  }
  ProcessOptions Env() const {
    ProcessOptions o;
    o.env = {{"HOME", dir_}};
    return o;
  }
  // The page's DOM after it loaded.
  absl::StatusOr<std::string> Dom(const std::string& url) const {
    std::vector<std::string> argv = Argv(url);
    argv.insert(argv.end() - 1, "--dump-dom");
    absl::StatusOr<ProcessResult> r =
        RunProcess(argv, absl::Seconds(60), Env());
    if (!r.ok()) return r.status();
    if (r->exit_code != 0 || r->out.empty()) {
      return absl::InternalError(
          absl::StrCat("chromium exited ", r->exit_code, ": ", r->err));
    }
    return r->out;
  }
  absl::Status Screenshot(const std::string& url, const std::string& png,
                          const std::string& size = "1280,1500") const {
    std::vector<std::string> argv = Argv(url);
    argv.insert(argv.end() - 1, "--screenshot=" + png);
    argv.insert(argv.end() - 1, "--window-size=" + size);
    absl::StatusOr<ProcessResult> r =
        RunProcess(argv, absl::Seconds(60), Env());
    if (!r.ok()) return r.status();
    return r->exit_code == 0 ? absl::OkStatus() : absl::InternalError(r->err);
  }

 private:
  std::string dir_;
};

// Loads `url` until `done` holds for what it shows, at most `tries` times
// within `timeout`; the last sight either way.
Seen LoadUntil(const Browser& browser, const std::string& url,
               const std::function<bool(const Seen&)>& done, int tries,
               absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  Seen seen;
  for (int i = 0; i < tries && absl::Now() < deadline; ++i) {
    absl::StatusOr<std::string> dom = browser.Dom(url);
    EXPECT_TRUE(dom.ok()) << dom.status();
    if (!dom.ok()) return seen;
    seen = Parse(*dom);
    if (done(seen)) return seen;
  }
  return seen;
}

// The text of the summary row named `name` ("<th>epoch</th><td>2 of
// 2</td>"), "" when there is none.
std::string SummaryRow(const std::string& dom, const std::string& name) {
  const std::string th = "<th>" + name + "</th><td>";
  const size_t at = dom.find(th);
  if (at == std::string::npos) return "";
  const size_t end = dom.find("</td>", at + th.size());
  return dom.substr(at + th.size(), end - at - th.size());
}

// Issue 49: the chart `id` of the page `dom`, alone on a page at the
// window's left edge in the page's style, as Chromium draws it: whether any
// of its pixels in the two leftmost columns is dark, i.e. a y-axis label
// runs past the chart's left edge and is cut there ("6.486e+04" in the
// page's sans-serif: 11 such pixels; "64,860": none). Errors when it
// cannot tell.
absl::StatusOr<bool> ChartIsCutAtTheLeft(const Browser& browser,
                                         const std::string& dom,
                                         const std::string& id,
                                         const std::string& dir) {
  const size_t begin = dom.find("<figure class=\"chart\" id=\"" + id + "\"");
  const size_t end = dom.find("</figure>", begin);
  if (begin == std::string::npos || end == std::string::npos) {
    return absl::NotFoundError("no chart " + id);
  }
  // The page's own style (its font sizes the labels), then the chart at
  // the window's edge with nothing else beside it.
  const size_t style = dom.find("<style>");
  const size_t style_end = dom.find("</style>", style);
  if (style == std::string::npos || style_end == std::string::npos) {
    return absl::NotFoundError("no <style> on the page");
  }
  const std::string html = dir + "/" + id + ".html";
  std::ofstream(html) << "<!doctype html><html><head>"
                      << dom.substr(style, style_end + 8 - style)
                      << "<style>body,main{margin:0;padding:0}figure{margin:0}"
                         "figcaption,.legend{display:none}</style></head><body>"
                      << dom.substr(begin, end - begin + 9) << "</body></html>";
  const std::string png = dir + "/" + id + ".png";
  if (absl::Status s = browser.Screenshot("file://" + html, png, "600,300");
      !s.ok()) {
    return s;
  }
  const std::string bytes = ReadFileOrEmpty(png);
  RgbImage image;
  if (absl::Status s = DecodePng(reinterpret_cast<const uint8_t*>(bytes.data()),
                                 bytes.size(), &image);
      !s.ok()) {
    return s;
  }
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < 2; ++x) {
      const uint8_t* px = image.Row(y) + 3 * x;
      if (px[0] + px[1] + px[2] < 3 * 160) return true;
    }
  }
  return false;
}

TEST(DashboardBrowserTest, TheLossCurveGrowsAndTheJobEndsSucceeded) {
  if (access(kChromium, X_OK) != 0) {
    GTEST_SKIP() << kChromium
                 << " is not installed (apt-get install chromium; "
                    "scripts/setup.sh does): no browser to test the "
                    "dashboard in";
  }
  const std::string dir = FreshDir("dashboard-browser");
  const std::string port_file = dir + "/metrics.port";
  auto cluster = Cluster::Start("dashboard",
                                {"--metrics_listen=127.0.0.1:0", "--dashboard",
                                 "--metrics_port_file=" + port_file});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  absl::StatusOr<int> port = WaitForPortFile(port_file, absl::Seconds(30));
  ASSERT_TRUE(port.ok()) << port.status();
  ASSERT_TRUE(c.StartWorkers(2, {}).ok());
  absl::StatusOr<std::string> job = c.Submit(Spec());
  ASSERT_TRUE(job.ok()) << job.status();
  const std::string url =
      absl::StrCat("http://127.0.0.1:", *port, "/jobs/", *job);
  const Browser browser(dir);

  const Seen first = LoadUntil(
      browser, url, [](const Seen& s) { return s.loss_points >= 1; }, 200,
      absl::Minutes(3));
  ASSERT_GE(first.loss_points, 1)
      << "no loss point seen; state " << first.state;
  EXPECT_EQ(first.state, "RUNNING") << "the job ended before it was seen "
                                       "running: make it longer";
  const Seen grown = LoadUntil(
      browser, url,
      [&](const Seen& s) { return s.loss_points > first.loss_points; }, 200,
      absl::Minutes(3));
  EXPECT_GT(grown.loss_points, first.loss_points);
  const Seen end = LoadUntil(
      browser, url, [](const Seen& s) { return s.state == "SUCCEEDED"; }, 300,
      absl::Minutes(5));
  EXPECT_EQ(end.state, "SUCCEEDED");
  EXPECT_GE(end.loss_points, grown.loss_points);

  // Issue 49: the finished page counts epochs from 1, as ringctl does, and
  // prints counts as counts, every axis label whole.
  absl::StatusOr<std::string> dom = browser.Dom(url);
  ASSERT_TRUE(dom.ok()) << dom.status();
  EXPECT_EQ(SummaryRow(*dom, "epoch"), "3 of 3");
  EXPECT_TRUE(absl::StrContains(SummaryRow(*dom, "step"), " of "))
      << SummaryRow(*dom, "step");
  EXPECT_FALSE(absl::StrContains(*dom, "e+0")) << "e-notation on the page";
  for (const char* chart : {"chart-samples-per-sec", "chart-loss",
                            "chart-step-time", "chart-learning-rate"}) {
    absl::StatusOr<bool> cut = ChartIsCutAtTheLeft(browser, *dom, chart, dir);
    ASSERT_TRUE(cut.ok()) << chart << ": " << cut.status();
    EXPECT_FALSE(*cut) << chart << "'s y-axis labels run past its left edge";
  }

  // The finished page, for a person to look at (bazel-testlogs/.../
  // test.outputs/): the README's screenshot is one of these.
  if (const char* out = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    EXPECT_TRUE(
        browser.Screenshot(url, absl::StrCat(out, "/dashboard-job.png")).ok());
  }
}

}  // namespace
}  // namespace ringleader::testing
