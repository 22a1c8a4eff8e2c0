#include "worker/torch_logging.h"

#include <c10/util/Logging.h>

void ShowTorchLogInfo() { c10::ShowLogInfoToStderr(); }
