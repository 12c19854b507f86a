// Two error channels (DESIGN.md, house style):
//  - orchid::Error: a user error (bad model, unsupported operator, bad
//    arguments). The CLI prints its message and exits with status 2.
//  - ORCHID_CHECK(cond) << msg: an internal invariant; a failure is a bug in
//    Orchid, reported as orchid::InternalError.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#include "orchid/error.h"

namespace orchid {

namespace detail {

// Collects a message with operator<< and throws when destroyed.
template <typename E>
class Thrower {
 public:
  Thrower(const char* prefix) { stream_ << prefix; }
  Thrower(const Thrower&) = delete;
  [[noreturn]] ~Thrower() noexcept(false) { throw E(stream_.str()); }
  template <typename T>
  Thrower& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

}  // namespace detail
}  // namespace orchid

// ORCHID_CHECK(cond) << "details";  throws InternalError when cond is false.
#define ORCHID_CHECK(cond)                                                     \
  if (cond) {                                                                  \
  } else                                                                       \
    ::orchid::detail::Thrower<::orchid::InternalError>(                        \
        "internal error at " __FILE__ ":" ORCHID_STRINGIFY(__LINE__) ": check `" #cond "` failed: ")

// ORCHID_FAIL() << "message";  throws a user-facing orchid::Error.
#define ORCHID_FAIL() ::orchid::detail::Thrower<::orchid::Error>("")

#define ORCHID_STRINGIFY_IMPL(x) #x
#define ORCHID_STRINGIFY(x) ORCHID_STRINGIFY_IMPL(x)
