#ifndef RINGLEADER_TESTS_TESTING_NUMERIC_BOUNDS_H_
#define RINGLEADER_TESTS_TESTING_NUMERIC_BOUNDS_H_

// For the tests whose bound is on a trained result (issue 49,
// tests/README.md "Bounds on trained results"): each bound is set from the
// quantity's spread over seeds and over OpenBLAS's kernel families, which
// scripts/numeric_spread.sh measures by running these tests again and
// again. A test takes its training seed through TrainingSeed() and prints
// each bounded quantity with ReportNumeric(); in the suite neither changes
// anything.

#include <cstdint>
#include <string>

namespace ringleader::testing {

// `own` (the seed the test's job spec has always had), plus
// $RINGLEADER_TEST_SEED_OFFSET when scripts/numeric_spread.sh sets it.
int64_t TrainingSeed(int64_t own);

// Prints "NUMERIC <name> <value>" (full precision) on stdout, where
// scripts/numeric_spread.sh collects it from the test's log.
void ReportNumeric(const std::string& name, double value);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_NUMERIC_BOUNDS_H_
