// How much memory a program may plan for: $ORCHID_MEMORY_LIMIT (bytes, or
// with a K, M or G suffix: "512M", "8G"), else the machine's physical memory.
// A program over it is refused before anything is allocated
// (runtime/memory_check.h), instead of failing in the allocator or the OOM
// killer.
#pragma once

#include <cstddef>

namespace orchid {

// orchid::Error when $ORCHID_MEMORY_LIMIT is set but not a size.
size_t memory_limit_bytes();

}  // namespace orchid
