#!/usr/bin/env bash
# Runs tests/deploy/deployed_stop_test.py with Debian's python3 (pytest,
# python3-yaml) from the runfiles root, where deploy/, README.md and the
# binaries are; its JUnit cases go to Bazel's test.xml.
set -euo pipefail
export DEPLOY_TEST_BINARIES="$1:$2:$3"
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  --junitxml="${XML_OUTPUT_FILE:-/dev/null}" tests/deploy/deployed_stop_test.py
