#ifndef RINGLEADER_TESTS_TESTING_TEST_PKI_H_
#define RINGLEADER_TESTS_TESTING_TEST_PKI_H_

// A throwaway certificate authority for TLS tests, made at test time with the
// openssl command line tool (P-256 keys, valid one day): a CA, a server
// certificate for 127.0.0.1 and localhost (SAN), and two client
// certificates.

#include <string>

#include "absl/status/statusor.h"

namespace ringleader::testing {

struct TestPki {
  // PEM file paths.
  std::string ca_cert;
  std::string server_cert;
  std::string server_key;
  std::string client_cert;
  std::string client_key;
  // Another client certificate of the same CA with another identity (CN
  // "<name>-worker-2"): a second worker machine the server trusts as much.
  std::string second_client_cert;
  std::string second_client_key;
};

// Writes the files under `dir` (created), named after `name` so that two
// authorities can share a directory. Fails with openssl's stderr.
absl::StatusOr<TestPki> MakeTestPki(const std::string& dir,
                                    const std::string& name);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_TEST_PKI_H_
