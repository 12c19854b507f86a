#include "support/memory_limit.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "support/error.h"

namespace orchid {

namespace {

size_t parse_size(const std::string& text) {
  size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string suffix = text.substr(used);
  const size_t scale = suffix.empty() ? 1 : suffix == "K" ? size_t(1) << 10 : suffix == "M" ? size_t(1) << 20
                       : suffix == "G" ? size_t(1) << 30 : 0;
  if (used == 0 || scale == 0 || value == 0) {
    ORCHID_FAIL() << "$ORCHID_MEMORY_LIMIT is '" << text << "'; expected a size in bytes, optionally with K, M or G "
                  << "(e.g. 8G)";
  }
  return size_t(value) * scale;
}

}  // namespace

size_t memory_limit_bytes() {
  if (const char* limit = std::getenv("ORCHID_MEMORY_LIMIT"); limit && *limit) return parse_size(limit);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? size_t(pages) * size_t(page) : ~size_t(0);
}

}  // namespace orchid
