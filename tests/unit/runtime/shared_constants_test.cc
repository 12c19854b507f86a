// What kernels derive from constants is made once per scope, or once per
// store for the executables that share one (a Model's instances).
#include <thread>

#include <gtest/gtest.h>

#include "runtime/shared_constants.h"

namespace orchid::runtime {
namespace {

std::shared_ptr<const int> derive(ValueId id, const std::string& kind, int& made) {
  return shared_derived<int>(id, kind, [&] {
    ++made;
    return std::make_shared<const int>(made);
  });
}

TEST(SharedConstants, OneObjectPerConstantAndKindInAScope) {
  int made = 0;
  {
    const SharedConstantsScope scope;
    const auto a = derive(ValueId(3), "panels 64", made);
    EXPECT_EQ(derive(ValueId(3), "panels 64", made), a);
    EXPECT_NE(derive(ValueId(3), "panels 128", made), a);
    EXPECT_NE(derive(ValueId(4), "panels 64", made), a);
    EXPECT_EQ(made, 3);
  }
  derive(ValueId(3), "panels 64", made);  // outside a scope: made each time
  derive(ValueId(3), "panels 64", made);
  EXPECT_EQ(made, 5);
}

TEST(SharedConstants, ScopesOverOneStoreShareAcrossThreads) {
  auto store = std::make_shared<SharedConstants>();
  int made = 0;
  std::shared_ptr<const int> first, second;
  std::thread([&] {
    const SharedConstantsScope scope(store);
    first = derive(ValueId(1), "weights", made);
  }).join();
  std::thread([&] {
    const SharedConstantsScope scope(store);
    second = derive(ValueId(1), "weights", made);
  }).join();
  EXPECT_EQ(first, second);
  EXPECT_EQ(made, 1);
  {
    const SharedConstantsScope fresh;  // a scope of its own store
    EXPECT_NE(derive(ValueId(1), "weights", made), first);
  }
}

}  // namespace
}  // namespace orchid::runtime
