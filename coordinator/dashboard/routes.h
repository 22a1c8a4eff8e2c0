#ifndef RINGLEADER_COORDINATOR_DASHBOARD_ROUTES_H_
#define RINGLEADER_COORDINATOR_DASHBOARD_ROUTES_H_

// The dashboard's pages on the coordinator's HTTP server (the one serving
// /metrics, common/metrics_http.h): GET /, /jobs, /jobs/<id>, /workers.
// Read-only: only GET routes, each reading the coordinator through the
// calls the UserService answers with. Every page checks access first
// (access.h).

#include <string>

#include "coordinator/coordinator.h"

namespace httplib {
class Server;
}

namespace ringleader::dashboard {

struct DashboardConfig {
  // The API's bearer token (--auth_token_file); empty: open.
  std::string auth_token;
  // The server speaks HTTPS (cookies are marked Secure).
  bool tls = false;
};

// `coordinator` must outlive the server.
void AddDashboardRoutes(httplib::Server& server, Coordinator* coordinator,
                        DashboardConfig config);

}  // namespace ringleader::dashboard

#endif  // RINGLEADER_COORDINATOR_DASHBOARD_ROUTES_H_
