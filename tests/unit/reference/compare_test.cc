// compare_tensors is the judge of every differential test, `orchid check`,
// conformance and the model tests: these pin down what it accepts.
#include "reference/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace orchid::reference {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor f32(const std::vector<double>& values) {
  return Tensor::from_vector(DType::Float32, {static_cast<int64_t>(values.size())}, values);
}

// One element each side, with tolerances loose enough to accept any finite
// pair of the values used here: whatever fails, fails for being non-finite.
bool matches(double actual, double expected) {
  return compare_tensors(f32({actual}), f32({expected}), /*rtol=*/1.0, /*atol=*/1e6).ok;
}

TEST(CompareTensors, InfinityMatchesOnlyTheSameInfinity) {
  EXPECT_TRUE(matches(kInf, kInf));
  EXPECT_TRUE(matches(-kInf, -kInf));
  EXPECT_FALSE(matches(-kInf, kInf));
  EXPECT_FALSE(matches(kInf, -kInf));
  EXPECT_FALSE(matches(1.0, kInf));
  EXPECT_FALSE(matches(3e38, kInf));
  EXPECT_FALSE(matches(kInf, 1.0));
  EXPECT_FALSE(matches(-5.0, -kInf));
}

TEST(CompareTensors, NaNMatchesOnlyNaN) {
  EXPECT_TRUE(matches(kNaN, kNaN));
  EXPECT_FALSE(matches(kNaN, kInf));
  EXPECT_FALSE(matches(kInf, kNaN));
  EXPECT_FALSE(matches(kNaN, 0.0));
  EXPECT_FALSE(matches(0.0, kNaN));
}

TEST(CompareTensors, FiniteValuesWithinAtolPlusRtolTimesExpected) {
  const Tensor expected = f32({100.0, 0.0});
  EXPECT_TRUE(compare_tensors(f32({100.5, 0.0}), expected, 1e-2, 0).ok);        // 0.5 <= 1
  EXPECT_FALSE(compare_tensors(f32({101.5, 0.0}), expected, 1e-2, 0).ok);       // 1.5 > 1
  EXPECT_TRUE(compare_tensors(f32({100.0, 1e-6}), expected, 0, 2e-6).ok);       // atol near 0
  EXPECT_FALSE(compare_tensors(f32({100.0, 1e-5}), expected, 1e-2, 2e-6).ok);   // rtol * 0 = 0
}

TEST(CompareTensors, MismatchNamesTheFirstFailingIndexAndErrors) {
  const Comparison c = compare_tensors(f32({1.0, 7.0, kNaN}), f32({1.0, kInf, 2.0}), 1e-3, 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.mismatch.find("at [1]"), std::string::npos) << c.mismatch;
  EXPECT_EQ(c.max_abs_error, kInf);
}

TEST(CompareTensors, IntegersAndBooleansMustBeEqual) {
  const auto i64 = [](std::vector<double> v) {
    return Tensor::from_vector(DType::Int64, {static_cast<int64_t>(v.size())}, v);
  };
  EXPECT_TRUE(compare_tensors(i64({1, -2}), i64({1, -2}), 1.0, 10.0).ok);
  EXPECT_FALSE(compare_tensors(i64({1, -1}), i64({1, -2}), 1.0, 10.0).ok);
  const auto boolean = [](std::vector<double> v) {
    return Tensor::from_vector(DType::Bool, {static_cast<int64_t>(v.size())}, v);
  };
  EXPECT_FALSE(compare_tensors(boolean({1}), boolean({0}), 1.0, 10.0).ok);
}

TEST(CompareTensors, DtypeAndShapeMustAgree) {
  EXPECT_FALSE(compare_tensors(f32({1.0}), Tensor::from_vector(DType::Float64, {1}, std::vector<double>{1.0}),
                               1, 1)
                   .ok);
  EXPECT_FALSE(compare_tensors(f32({1.0, 2.0}), Tensor::from_vector(DType::Float32, {1, 2}, std::vector<double>{1, 2}),
                               1, 1)
                   .ok);
}

}  // namespace
}  // namespace orchid::reference
