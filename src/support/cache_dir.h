// Where Orchid keeps what it can reuse across compiles: measured kernel costs
// (costs.sqlite) and built kernel libraries (kernels/). $ORCHID_CACHE_DIR,
// else $XDG_CACHE_HOME/orchid, else $HOME/.cache/orchid, else
// /tmp/orchid-cache. Created when missing.
#pragma once

#include <string>

namespace orchid {

std::string default_cache_dir();

}  // namespace orchid
