#include "tests/testing/test_pki.h"

#include <sys/stat.h>

#include <fstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/testing/process.h"

namespace ringleader::testing {
namespace {

constexpr char kOpenssl[] = "/usr/bin/openssl";

absl::Status Openssl(std::vector<std::string> args) {
  args.insert(args.begin(), kOpenssl);
  absl::StatusOr<ProcessResult> r = RunProcess(args, absl::Seconds(30));
  if (!r.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", kOpenssl,
                     " (apt-get install openssl): ", r.status().message()));
  }
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("openssl ", args[1], " exited ",
                                            r->exit_code, ": ", r->err));
  }
  return absl::OkStatus();
}

// A key and a certificate signed by the CA, with the given extensions.
absl::Status Issue(const std::string& prefix, const std::string& cn,
                   const std::string& extensions, const std::string& ca_cert,
                   const std::string& ca_key, int serial) {
  const std::string ext_file = prefix + ".ext";
  std::ofstream(ext_file) << extensions;
  if (absl::Status s = Openssl({"req", "-new", "-newkey", "ec", "-pkeyopt",
                                "ec_paramgen_curve:prime256v1", "-nodes",
                                "-keyout", prefix + ".key", "-out",
                                prefix + ".csr", "-subj", "/CN=" + cn});
      !s.ok()) {
    return s;
  }
  return Openssl({"x509", "-req", "-in", prefix + ".csr", "-CA", ca_cert,
                  "-CAkey", ca_key, "-set_serial", absl::StrCat(serial),
                  "-days", "1", "-extfile", ext_file, "-out", prefix + ".pem"});
}

}  // namespace

absl::StatusOr<TestPki> MakeTestPki(const std::string& dir,
                                    const std::string& name) {
  ::mkdir(dir.c_str(), 0700);
  const std::string base = absl::StrCat(dir, "/", name);
  TestPki pki;
  pki.ca_cert = base + "-ca.pem";
  const std::string ca_key = base + "-ca.key";
  if (absl::Status s = Openssl(
          {"req", "-x509", "-newkey", "ec", "-pkeyopt",
           "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", ca_key, "-out",
           pki.ca_cert, "-days", "1", "-subj", "/CN=" + name + " test CA",
           "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
           "keyUsage=critical,keyCertSign,cRLSign"});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Issue(base + "-server", "127.0.0.1",
                             "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                             "extendedKeyUsage=serverAuth\n",
                             pki.ca_cert, ca_key, 2);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          Issue(base + "-client", name + "-worker",
                "extendedKeyUsage=clientAuth\n", pki.ca_cert, ca_key, 3);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          Issue(base + "-client2", name + "-worker-2",
                "extendedKeyUsage=clientAuth\n", pki.ca_cert, ca_key, 4);
      !s.ok()) {
    return s;
  }
  pki.server_cert = base + "-server.pem";
  pki.server_key = base + "-server.key";
  pki.client_cert = base + "-client.pem";
  pki.client_key = base + "-client.key";
  pki.second_client_cert = base + "-client2.pem";
  pki.second_client_key = base + "-client2.key";
  return pki;
}

}  // namespace ringleader::testing
