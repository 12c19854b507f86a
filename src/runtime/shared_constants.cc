#include "runtime/shared_constants.h"

#include "support/error.h"

namespace orchid::runtime {

namespace {

// The open scope's store on this thread; null outside a scope.
thread_local std::shared_ptr<SharedConstants> t_store;

}  // namespace

std::shared_ptr<const void> SharedConstants::get(ValueId id, const std::string& kind,
                                                 const std::function<std::shared_ptr<const void>()>& make) {
  const std::lock_guard lock(mutex_);  // held while making: one copy, made once
  std::shared_ptr<const void>& slot = derived_[{id, kind}];
  if (!slot) slot = make();
  return slot;
}

SharedConstantsScope::SharedConstantsScope(std::shared_ptr<SharedConstants> store) {
  ORCHID_CHECK(!t_store) << "shared-constant scopes do not nest";
  t_store = store ? std::move(store) : std::make_shared<SharedConstants>();
}

SharedConstantsScope::~SharedConstantsScope() {
  t_store.reset();  // the kernels keep what they hold; the store's owner keeps the rest
}

std::shared_ptr<const void> shared_derived_any(ValueId id, const std::string& kind,
                                               const std::function<std::shared_ptr<const void>()>& make) {
  if (!t_store) return make();
  return t_store->get(id, kind, make);
}

}  // namespace orchid::runtime
