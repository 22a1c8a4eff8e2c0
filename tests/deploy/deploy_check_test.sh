#!/usr/bin/env bash
# Runs tests/deploy/check_deploy.py with Debian's python3 (python3-yaml) from
# the runfiles root, where deploy/ and the binaries are.
set -euo pipefail
exec /usr/bin/python3 tests/deploy/check_deploy.py "$@"
