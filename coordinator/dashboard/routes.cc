#include "coordinator/dashboard/routes.h"

#include <httplib.h>

#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "coordinator/dashboard/access.h"
#include "coordinator/dashboard/html.h"
#include "coordinator/dashboard/job_page.h"
#include "coordinator/dashboard/jobs_page.h"
#include "coordinator/dashboard/page_data.h"
#include "coordinator/dashboard/workers_page.h"

namespace ringleader::dashboard {
namespace {

constexpr char kHtml[] = "text/html; charset=utf-8";

using Handler =
    std::function<void(const httplib::Request&, httplib::Response&)>;

// The status of a failed read as a page.
void ErrorPage(const absl::Status& s, httplib::Response& res) {
  res.status = s.code() == absl::StatusCode::kNotFound ? 404 : 500;
  res.set_content(
      Page("Error", absl::StrCat("<h1>", Escape(s.ToString()), "</h1>"), 0),
      kHtml);
}

// `handler`, behind the access check.
Handler Guarded(const DashboardConfig& config, Handler handler) {
  return [config, handler = std::move(handler)](const httplib::Request& req,
                                                httplib::Response& res) {
    AccessRequest a;
    a.authorization = req.get_header_value("Authorization");
    a.cookie = req.get_header_value("Cookie");
    a.has_query_token = req.has_param("token");
    a.query_token = req.get_param_value("token");
    a.path = req.path;
    const AccessDecision d = DecideAccess(config.auth_token, a, config.tls);
    // Pages hold job names and log lines: never cached by the browser.
    res.set_header("Cache-Control", "no-store");
    res.set_header("X-Content-Type-Options", "nosniff");
    // No script runs and nothing is fetched from elsewhere (issue 36:
    // no request leaves the page).
    res.set_header("Content-Security-Policy",
                   "default-src 'none'; style-src 'unsafe-inline'; "
                   "img-src 'self'; frame-ancestors 'none'");
    switch (d.kind) {
      case AccessDecision::Kind::kAllow:
        handler(req, res);
        return;
      case AccessDecision::Kind::kRedirectWithCookie:
        res.set_header("Set-Cookie", d.set_cookie);
        res.set_redirect(d.location, 303);
        return;
      case AccessDecision::Kind::kDeny:
        res.status = 401;
        res.set_header("WWW-Authenticate", "Bearer");
        res.set_content(absl::StrCat(d.why, "\n"), "text/plain");
        return;
    }
  };
}

}  // namespace

void AddDashboardRoutes(httplib::Server& server, Coordinator* coordinator,
                        DashboardConfig config) {
  server.Get(
      "/", Guarded(config, [](const httplib::Request&, httplib::Response& res) {
        res.set_redirect("/jobs", 303);
      }));
  server.Get("/jobs", Guarded(config, [coordinator](const httplib::Request&,
                                                    httplib::Response& res) {
               absl::StatusOr<JobList> list = LoadJobList(*coordinator);
               if (!list.ok()) return ErrorPage(list.status(), res);
               res.set_content(RenderJobsPage(list->jobs, list->omitted),
                               kHtml);
             }));
  server.Get(R"(/jobs/([^/]+))",
             Guarded(config, [coordinator](const httplib::Request& req,
                                           httplib::Response& res) {
               // httplib decoded the path already.
               absl::StatusOr<JobPageData> data =
                   LoadJobPage(*coordinator, req.matches[1], absl::Now());
               if (!data.ok()) return ErrorPage(data.status(), res);
               res.set_content(RenderJobPage(*data), kHtml);
             }));
  server.Get("/workers", Guarded(config, [coordinator](const httplib::Request&,
                                                       httplib::Response& res) {
               res.set_content(
                   RenderWorkersPage(coordinator->user_calls().ListWorkers(),
                                     absl::Now()),
                   kHtml);
             }));
}

}  // namespace ringleader::dashboard
