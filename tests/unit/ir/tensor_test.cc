#include <gtest/gtest.h>

#include "ir/tensor.h"

namespace orchid {

TEST(Tensor, CastFloatToHalfAndBack) {
  Tensor t = Tensor::from_vector(DType::Float32, {4}, std::vector<float>{1.0f, -2.5f, 65504.0f, 1e-7f});
  Tensor back = t.cast(DType::Float16).cast(DType::Float32);
  EXPECT_EQ(back.data<float>()[0], 1.0f);
  EXPECT_EQ(back.data<float>()[1], -2.5f);
  EXPECT_EQ(back.data<float>()[2], 65504.0f);
  EXPECT_NEAR(back.data<float>()[3], 1.19e-7f, 1e-8f);  // nearest subnormal half
}

TEST(Tensor, ShapeHelpers) {
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  EXPECT_EQ(shape_to_string({1, 3, 224, 224}), "1x3x224x224");
  EXPECT_EQ(shape_strides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
}

}  // namespace orchid
