"""tools/find_cuda_libs.py (what @local_cuda links) on fake directory layouts.

Each case builds a machine in a temporary directory (--root) and runs the
script as tools/cuda_configure.bzl does, reading its JSON: a pip LibTorch
with NVIDIA's CUDA 13 and CUDA 12 wheels, NCCL in the system's directories,
NCCL in the CUDA root, none at all, and RINGLEADER_NCCL_PATH. Each test is
one JUnit case in $XML_OUTPUT_FILE (Bazel's test.xml), which
tools/count_tests.py counts.
    python3 tests/tools/find_cuda_libs_test.py   (from the workspace root)
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "..", "..", "tools", "find_cuda_libs.py")
CUDA_HEADERS = ["cuda_runtime.h", "cuda_fp16.h", "nv/target", "cublas_v2.h",
                "cublasLt.h", "cusparse.h", "cusolverDn.h"]


class Layout(unittest.TestCase):
    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.root = self._dir.name

    def tearDown(self):
        self._dir.cleanup()

    def path(self, rel):
        return os.path.join(self.root, rel)

    def touch(self, *rels):
        for rel in rels:
            os.makedirs(os.path.dirname(self.path(rel)), exist_ok=True)
            open(self.path(rel), "w").close()

    def find(self, libtorch="", nccl="", cuda=""):
        out = subprocess.run(
            [sys.executable, SCRIPT, "--root", self.root,
             "--libtorch", libtorch and self.path(libtorch),
             "--nccl", nccl and self.path(nccl), "--cuda", cuda and self.path(cuda)],
            check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
        return json.loads(out)

    # Machines ------------------------------------------------------------

    def pip_torch(self, cuda=True):
        self.touch("site/torch/include/ATen/ATen.h", "site/torch/lib/libtorch.so")
        if cuda:
            self.touch("site/torch/lib/libtorch_cuda.so")
        return "site/torch"

    def pip_nccl(self):
        # nvidia-nccl-cu13: only the versioned library.
        self.touch("site/nvidia/nccl/include/nccl.h",
                   "site/nvidia/nccl/lib/libnccl.so.2")

    def pip_cu13(self):
        # CUDA 13's wheels share nvidia/cu13 (runtime, cuBLAS, cuSPARSE, ...).
        self.touch(*["site/nvidia/cu13/include/" + h for h in CUDA_HEADERS])
        self.touch("site/nvidia/cu13/lib/libcudart.so.13")

    def cuda_root(self, nccl=True, cudart=True):
        if cudart:
            self.touch(*["usr/local/cuda/include/" + h for h in CUDA_HEADERS])
            self.touch("usr/local/cuda/lib64/libcudart.so")
        if nccl:
            self.touch("usr/local/cuda/include/nccl.h",
                       "usr/local/cuda/lib64/libnccl.so")

    def debian_torch(self):
        self.touch("usr/lib/x86_64-linux-gnu/libtorch.so")


class FindCudaLibsTest(Layout):
    def test_pip_torch_takes_nccl_and_cudart_from_its_wheels(self):
        torch = self.pip_torch()
        self.pip_nccl()
        self.pip_cu13()
        self.cuda_root()  # also present: must not be picked
        got = self.find(libtorch=torch)
        self.assertNotIn("error", got)
        self.assertTrue(got["torch_cuda"])
        self.assertTrue(got["has_nccl"])
        self.assertEqual(got["pip_site"], self.path("site"))
        self.assertEqual(got["nccl"], {
            "source": "pip", "include": self.path("site/nvidia/nccl/include"),
            "lib_dir": self.path("site/nvidia/nccl/lib"), "lib": "libnccl.so.2"})
        self.assertEqual(got["cudart"], {
            "source": "pip", "include": self.path("site/nvidia/cu13/include"),
            "lib_dir": self.path("site/nvidia/cu13/lib"), "lib": "libcudart.so.13"})
        self.assertEqual(got["include_dirs"], [self.path("site/nvidia/nccl/include"),
                                               self.path("site/nvidia/cu13/include")])

    def test_pip_cuda12_wheels_each_have_their_own_directory(self):
        torch = self.pip_torch()
        self.pip_nccl()
        self.touch("site/nvidia/cuda_runtime/include/cuda_runtime.h",
                   "site/nvidia/cuda_runtime/include/cuda_fp16.h",
                   "site/nvidia/cuda_runtime/include/nv/target",
                   "site/nvidia/cuda_runtime/lib/libcudart.so.12",
                   "site/nvidia/cublas/include/cublas_v2.h",
                   "site/nvidia/cublas/include/cublasLt.h",
                   "site/nvidia/cusparse/include/cusparse.h",
                   "site/nvidia/cusolver/include/cusolverDn.h")
        got = self.find(libtorch=torch)
        self.assertNotIn("error", got)
        self.assertEqual(got["cudart"]["lib"], "libcudart.so.12")
        self.assertEqual(got["include_dirs"], [
            self.path("site/nvidia/" + d + "/include")
            for d in ("nccl", "cuda_runtime", "cublas", "cusparse", "cusolver")])

    def test_system_nccl_with_the_cuda_roots_runtime(self):
        self.debian_torch()
        self.cuda_root(nccl=False)
        self.touch("usr/include/nccl.h", "usr/lib/x86_64-linux-gnu/libnccl.so")
        got = self.find()
        self.assertTrue(got["has_nccl"])
        self.assertFalse(got["torch_cuda"])
        self.assertEqual(got["nccl"]["source"], "system")
        self.assertEqual(got["nccl"]["lib_dir"], self.path("usr/lib/x86_64-linux-gnu"))
        self.assertEqual(got["cudart"]["source"], "cuda")
        # The compiler's own /usr/include is never added with -isystem.
        self.assertEqual(got["include_dirs"], [self.path("usr/local/cuda/include")])

    def test_aarch64_system_nccl(self):
        self.debian_torch()
        self.cuda_root(nccl=False)
        self.touch("usr/include/nccl.h", "usr/lib/aarch64-linux-gnu/libnccl.so.2")
        got = self.find()
        self.assertEqual(got["nccl"]["lib_dir"], self.path("usr/lib/aarch64-linux-gnu"))
        self.assertEqual(got["nccl"]["lib"], "libnccl.so.2")

    def test_cuda_root_as_on_the_build_machines(self):
        self.debian_torch()
        self.cuda_root()
        got = self.find()
        self.assertTrue(got["has_nccl"])
        self.assertFalse(got["torch_cuda"])
        self.assertEqual(got["nccl"]["source"], "cuda")
        self.assertEqual(got["nccl"]["lib"], "libnccl.so")
        self.assertEqual(got["include_dirs"], [self.path("usr/local/cuda/include")])

    def test_cuda_torch_without_nccl_is_an_error_naming_the_setting(self):
        torch = self.pip_torch()
        self.pip_cu13()
        self.cuda_root(nccl=False)
        got = self.find(libtorch=torch)
        self.assertFalse(got["has_nccl"])
        self.assertIn("NCCL was not found", got["error"])
        self.assertIn("RINGLEADER_NCCL_PATH", got["error"])
        for searched in ("site/nvidia/nccl/include", "usr/local/cuda/include",
                         "usr/include"):
            self.assertIn(self.path(searched), got["error"])

    def test_debian_cuda_torch_without_nccl_is_an_error(self):
        self.touch("usr/lib/x86_64-linux-gnu/libtorch.so",
                   "usr/lib/x86_64-linux-gnu/libtorch_cuda.so")
        self.cuda_root(nccl=False)
        got = self.find()
        self.assertTrue(got["torch_cuda"])
        self.assertIn("NCCL was not found", got["error"])

    def test_cpu_torch_without_nccl_builds_without_the_backend(self):
        torch = self.pip_torch(cuda=False)
        self.cuda_root(nccl=False)
        got = self.find(libtorch=torch)
        self.assertNotIn("error", got)
        self.assertFalse(got["has_nccl"])
        self.assertIsNone(got["nccl"])

    def test_setting_overrides_pip_and_cuda_root(self):
        torch = self.pip_torch()
        self.pip_nccl()
        self.pip_cu13()
        self.cuda_root()
        self.touch("opt/nccl/include/nccl.h", "opt/nccl/lib/libnccl.so.2.28.9",
                   "opt/nccl/lib/libnccl.so.2")
        got = self.find(libtorch=torch, nccl="opt/nccl")
        self.assertEqual(got["nccl"]["source"], "setting")
        self.assertEqual(got["nccl"]["lib_dir"], self.path("opt/nccl/lib"))
        self.assertEqual(got["nccl"]["lib"], "libnccl.so.2")  # the soname
        self.assertEqual(got["include_dirs"][0], self.path("opt/nccl/include"))
        self.assertEqual(got["cudart"]["source"], "pip")

    def test_setting_that_names_no_nccl_is_an_error_even_on_cpu(self):
        self.debian_torch()
        self.cuda_root()
        self.touch("opt/nccl/include/nccl.h")  # no library
        got = self.find(nccl="opt/nccl")
        self.assertIn("RINGLEADER_NCCL_PATH=" + self.path("opt/nccl"), got["error"])

    def test_cuda_torch_missing_cublas_headers_is_an_error(self):
        torch = self.pip_torch()
        self.pip_nccl()
        self.touch("site/nvidia/cu13/include/cuda_runtime.h",
                   "site/nvidia/cu13/include/cuda_fp16.h",
                   "site/nvidia/cu13/include/nv/target",
                   "site/nvidia/cu13/lib/libcudart.so.13")
        got = self.find(libtorch=torch, cuda="nowhere")
        self.assertIn("cublas_v2.h, cublasLt.h, cusparse.h, cusolverDn.h",
                      got["error"])

    def test_explicit_cuda_path(self):
        self.debian_torch()
        self.touch("opt/cuda/include/nccl.h", "opt/cuda/include/cuda_runtime.h",
                   "opt/cuda/lib/libnccl.so", "opt/cuda/lib/libcudart.so")
        got = self.find(cuda="opt/cuda")
        self.assertEqual(got["nccl"]["lib_dir"], self.path("opt/cuda/lib"))
        self.assertEqual(got["include_dirs"], [self.path("opt/cuda/include")])


class Recorder(unittest.TextTestResult):
    """Also keeps the tests that passed, for the JUnit file."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.passed = []

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed.append(test)


def write_junit(result, path):
    suite = ET.Element("testsuite", name="find_cuda_libs")
    outcomes = ([(t, None) for t in result.passed] +
                [(t, msg) for t, msg in result.failures + result.errors])
    for test, message in sorted(outcomes, key=lambda o: o[0].id()):
        case = ET.SubElement(suite, "testcase", classname="FindCudaLibsTest",
                             name=test.id().rsplit(".", 1)[-1])
        if message is not None:
            ET.SubElement(case, "failure", message=message[:200]).text = message
    suite.set("tests", str(len(outcomes)))
    suite.set("failures", str(len(result.failures) + len(result.errors)))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


if __name__ == "__main__":
    tests = unittest.defaultTestLoader.loadTestsFromTestCase(FindCudaLibsTest)
    result = unittest.TextTestRunner(verbosity=2, resultclass=Recorder).run(tests)
    if os.environ.get("XML_OUTPUT_FILE"):
        write_junit(result, os.environ["XML_OUTPUT_FILE"])
    sys.exit(0 if result.wasSuccessful() else 1)
