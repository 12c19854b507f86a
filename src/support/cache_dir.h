// Where Orchid keeps what it can reuse across compiles: measured kernel costs
// (costs.sqlite) and built kernel libraries (kernels/). $ORCHID_CACHE_DIR,
// else $XDG_CACHE_HOME/orchid, else $HOME/.cache/orchid, else
// /tmp/orchid-cache-<uid>.
//
// The kernel libraries there are code that later Orchid processes load, so
// the folder must be private: it is created 0700, and one that belongs to
// someone else or that its group or others may write is refused.
#pragma once

#include <string>

namespace orchid {

std::string default_cache_dir();

// `dir`, created (0700) when missing; orchid::Error naming it when it cannot
// be created, belongs to another user, or its group or others can write it.
std::string private_cache_dir(const std::string& dir);

}  // namespace orchid
