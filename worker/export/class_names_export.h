#ifndef RINGLEADER_WORKER_EXPORT_CLASS_NAMES_EXPORT_H_
#define RINGLEADER_WORKER_EXPORT_CLASS_NAMES_EXPORT_H_

// The class names of an ImageFolder job, beside the exported model, so that
// a prediction's index has its name after training as torchvision's
// ImageFolder.classes gave it before: a JSON array of the names by class id,
// "<model without its extension>.classes.json" (trained.pt ->
// trained.classes.json), next to the TorchScript file, else the
// safetensors one.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {

// Where the names go for `spec`; "" when it exports nothing.
std::string ClassNamesPath(const v1::ExportSpec& spec);

// The JSON text: ["cat", "dog"], strings escaped as JSON wants.
std::string ClassNamesJson(const std::vector<std::string>& names);

// Writes the file (through a temporary and a rename); nothing when
// `names` is empty or the spec exports nothing. Errors name the path.
absl::Status ExportClassNames(const std::vector<std::string>& names,
                              const v1::ExportSpec& spec);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_EXPORT_CLASS_NAMES_EXPORT_H_
