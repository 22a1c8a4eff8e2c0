#!/usr/bin/env bash
# Runs bench/training/recipe_test.py with Debian's python3 (python3-torch 1.13) from the
# runfiles root, where bench/ and examples/ are.
set -euo pipefail
exec /usr/bin/python3 bench/training/recipe_test.py
