// Shared helpers for the cost stage's tests: a temporary folder for cache
// databases, removed with everything in it when the test ends.
#pragma once

#include "../test_temp_dir.h"

namespace orchid::cost::testing {

class TempDir : public orchid::testing::TempDir {
 public:
  TempDir() : orchid::testing::TempDir("orchid-cost-test") {}
};

}  // namespace orchid::cost::testing
