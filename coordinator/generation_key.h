#ifndef RINGLEADER_COORDINATOR_GENERATION_KEY_H_
#define RINGLEADER_COORDINATOR_GENERATION_KEY_H_

#include <cstdint>
#include <string>
#include <utility>

namespace ringleader {

// Scopes per-generation state (KV entries, barriers): a (job, generation)
// pair, so a dead generation's state is dropped in one step.
using GenerationKey = std::pair<std::string, int64_t>;

}  // namespace ringleader

#endif  // RINGLEADER_COORDINATOR_GENERATION_KEY_H_
