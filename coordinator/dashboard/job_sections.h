#ifndef RINGLEADER_COORDINATOR_DASHBOARD_JOB_SECTIONS_H_
#define RINGLEADER_COORDINATOR_DASHBOARD_JOB_SECTIONS_H_

// The job page's sections other than its charts. Pure; thread-safe; every
// string from a user or a worker escaped.

#include <map>
#include <string>
#include <vector>

#include "coordinator/generation_events.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/logs.pb.h"

namespace ringleader::dashboard {

// State, generation, world, restarts, step, loss, samples/s, the message
// (why it failed), and the line of whom its ranks wait for.
std::string JobSummary(const v1::Job& job);
// Each rank's latest report: worker, step, loss, samples/s, step time.
std::string RanksTable(const v1::Job& job);
// Generations formed (members, joined, left), ended, resized, preempted,
// and recoveries with the steps lost.
std::string GenerationTable(const GenerationEvents::Snapshot& generations);
// Each rank's last lines, oldest first.
std::string LogSection(const std::map<int32_t, std::vector<v1::LogLine>>& logs);

}  // namespace ringleader::dashboard

#endif  // RINGLEADER_COORDINATOR_DASHBOARD_JOB_SECTIONS_H_
