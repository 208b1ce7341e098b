// What the daemon's own memory is made of, for the line each finished cycle logs: the resident
// size, what malloc hands out and what it keeps free without returning it, SQLite's share, and the
// thread count. A long run whose resident size creeps tells from these lines which part grows.
#pragma once

#include <string>

namespace tailforge {

struct MemoryUsage {
  double resident_mib = 0;        // VmRSS
  double anonymous_mib = 0;       // RssAnon: heaps, stacks, SQLite's caches
  double heap_in_use_mib = 0;     // malloc: bytes handed out and not freed (all arenas, mmapped too)
  double heap_free_kept_mib = 0;  // malloc: freed bytes held in the arenas
  double sqlite_mib = 0;          // sqlite3_memory_used(): page caches, statements, schemas
  int threads = 0;
};

MemoryUsage current_memory_usage();

// "rss 31.2 MiB (anonymous 17.0): heap in use 6.1, kept free 3.2, sqlite 4.0; 9 threads"
std::string describe(const MemoryUsage& usage);

}  // namespace tailforge
