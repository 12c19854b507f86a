// The two kinds of failure Orchid reports (DESIGN.md, house style):
//  - orchid::Error: a user error (a bad model or artifact, an unsupported
//    operator, a wrong input). Its message names the file, node, operator or
//    input and what was expected; the CLI prints it and exits with status 2.
//  - orchid::InternalError: a broken invariant, a bug in Orchid (status 3).
#pragma once

#include <stdexcept>
#include <string>

namespace orchid {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

}  // namespace orchid
