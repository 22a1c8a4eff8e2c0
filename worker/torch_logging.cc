#include "worker/torch_logging.h"

#include <c10/util/Logging.h>
#include <torch/csrc/jit/runtime/print_handler.h>

#include <string>

#include "common/logging.h"

void ShowTorchLogInfo() { c10::ShowLogInfoToStderr(); }

namespace {

// TorchScript's print() hands over its text with the final newline.
void LogPrinted(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    LOG(INFO) << "model printed: " << text.substr(start, end - start);
    start = end + 1;
  }
}

}  // namespace

void LogModelPrints() { torch::jit::setPrintHandler(&LogPrinted); }
