#include "runtime/shared_constants.h"

#include <map>
#include <optional>
#include <utility>

#include "support/error.h"

namespace orchid::runtime {

namespace {

using Derived = std::map<std::pair<ValueId, std::string>, std::shared_ptr<const void>>;

// The open scope's objects on this thread; empty outside a scope.
thread_local std::optional<Derived> t_scope;

}  // namespace

SharedConstantsScope::SharedConstantsScope() {
  ORCHID_CHECK(!t_scope) << "shared-constant scopes do not nest";
  t_scope.emplace();
}

SharedConstantsScope::~SharedConstantsScope() {
  t_scope.reset();  // the kernels keep what they hold
}

std::shared_ptr<const void> shared_derived_any(ValueId id, const std::string& kind,
                                               const std::function<std::shared_ptr<const void>()>& make) {
  if (!t_scope) return make();
  std::shared_ptr<const void>& slot = (*t_scope)[{id, kind}];
  if (!slot) slot = make();
  return slot;
}

}  // namespace orchid::runtime
