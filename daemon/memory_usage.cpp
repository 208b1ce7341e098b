#include "daemon/memory_usage.h"

#include <malloc.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <sqlite3.h>

namespace tailforge {

MemoryUsage current_memory_usage() {
  MemoryUsage usage;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) usage.resident_mib = std::atof(line.c_str() + 6) / 1024.0;
    if (line.rfind("RssAnon:", 0) == 0) usage.anonymous_mib = std::atof(line.c_str() + 8) / 1024.0;
    if (line.rfind("Threads:", 0) == 0) usage.threads = std::atoi(line.c_str() + 8);
  }
  struct mallinfo2 info = mallinfo2();
  constexpr double kMiB = 1024.0 * 1024.0;
  usage.heap_in_use_mib = static_cast<double>(info.uordblks + info.hblkhd) / kMiB;
  usage.heap_free_kept_mib = static_cast<double>(info.fordblks) / kMiB;
  usage.sqlite_mib = static_cast<double>(sqlite3_memory_used()) / kMiB;
  return usage;
}

std::string describe(const MemoryUsage& usage) {
  return fmt::format("rss {:.1f} MiB (anonymous {:.1f}): heap in use {:.1f}, kept free {:.1f}, sqlite {:.1f}; {} threads",
                     usage.resident_mib, usage.anonymous_mib, usage.heap_in_use_mib, usage.heap_free_kept_mib,
                     usage.sqlite_mib, usage.threads);
}

}  // namespace tailforge
