#include "cli/json_output.h"

#include "common/job_spec_io.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace ringleader::cli {
namespace {

// Keeps the fields in proto order, as the protobuf printer wrote them.
using Json = nlohmann::ordered_json;

Json WorkerToJson(const v1::WorkerInfo& worker) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;  // As JobToJson prints.
  if (!google::protobuf::util::MessageToJsonString(worker, &text, options)
           .ok()) {
    return Json{{"error", "cannot print worker as JSON"}};
  }
  return Json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace

std::string JobIdJson(const std::string& job_id, bool one_line) {
  return Json{{"job_id", job_id}}.dump(one_line ? -1 : 2);
}

std::string JobJson(const v1::Job& job) {
  return JobToJson(job, JsonStyle::kPretty);
}

std::string JobsJson(const std::vector<v1::Job>& jobs) {
  Json array = Json::array();
  for (const v1::Job& job : jobs) {
    array.push_back(Json::parse(JobToJson(job, JsonStyle::kCompact), nullptr,
                                /*allow_exceptions=*/false));
  }
  return Json{{"jobs", array}}.dump(2);
}

std::string WorkersJson(const std::vector<v1::WorkerInfo>& workers) {
  Json array = Json::array();
  for (const v1::WorkerInfo& w : workers) array.push_back(WorkerToJson(w));
  return Json{{"workers", array}}.dump(2);
}

}  // namespace ringleader::cli
