#include "api/instance_pool.h"

namespace orchid::api {

InstancePool::InstancePool(Make make, size_t max) : make_(std::move(make)), max_(max) {}

std::unique_ptr<runtime::Executable> InstancePool::acquire() {
  std::unique_lock lock(mutex_);
  idle_changed_.wait(lock, [&] { return !idle_.empty() || max_ == 0 || made_ < max_; });
  if (!idle_.empty()) {
    std::unique_ptr<runtime::Executable> instance = std::move(idle_.back());
    idle_.pop_back();
    return instance;
  }
  ++made_;  // counted before it exists, so concurrent callers respect max_
  lock.unlock();
  try {
    return make_();
  } catch (...) {
    lock.lock();
    --made_;
    idle_changed_.notify_one();
    throw;
  }
}

void InstancePool::release(std::unique_ptr<runtime::Executable> instance) {
  {
    const std::lock_guard lock(mutex_);
    idle_.push_back(std::move(instance));
  }
  idle_changed_.notify_one();
}

void InstancePool::with_instance(const std::function<void(runtime::Executable&)>& body) {
  std::unique_ptr<runtime::Executable> instance = acquire();
  try {
    body(*instance);
  } catch (...) {
    release(std::move(instance));  // a failed run (a wrong feed) leaves the instance as it was
    throw;
  }
  release(std::move(instance));
}

void InstancePool::prime() {
  release(acquire());
}

size_t InstancePool::size() const {
  const std::lock_guard lock(mutex_);
  return made_;
}

}  // namespace orchid::api
