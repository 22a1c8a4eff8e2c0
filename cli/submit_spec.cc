#include "cli/submit_spec.h"

#include "absl/status/status.h"
#include "common/job_spec_io.h"
#include "common/job_spec_validator.h"

namespace ringleader::cli {

absl::StatusOr<v1::JobSpec> BuildSubmitSpec(const std::string& file,
                                            const SpecOverrides& overrides) {
  v1::JobSpec spec;
  if (!file.empty()) {
    absl::StatusOr<v1::JobSpec> loaded = LoadJobSpecFile(file);
    if (!loaded.ok()) return loaded.status();
    spec = *std::move(loaded);
  }
  ApplySpecOverrides(overrides, &spec);
  spec = WithDefaults(std::move(spec));
  if (absl::Status s = ValidateJobSpec(spec); !s.ok()) {
    return absl::Status(s.code(), WithFlagHint(s.message()));
  }
  return spec;
}

}  // namespace ringleader::cli
