#include "coordinator/worker_token.h"

#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstdlib>

#include "absl/strings/escaping.h"

namespace ringleader {

std::string NewWorkerToken() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) std::abort();
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

std::string WorkerTokenHash(absl::string_view token) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(),
         digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

}  // namespace ringleader
