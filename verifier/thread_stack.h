// Gives a thread's unused stack pages back to the system. A thread's stack stays resident as deep
// as it ever reached (a deep parse, a big local buffer), and glibc keeps the stacks of ended
// threads for reuse with their pages: over a weekend of short-lived branch threads and long-lived
// workers, that residue grows. Workers call this between jobs, branch threads before they end.
#pragma once

namespace tailforge {

// Discards the pages of the calling thread's stack below the current frame (less a margin for the
// calls it makes next); they read as zeros again when touched. Does nothing on the main thread,
// whose stack grows on demand.
void release_unused_stack();

}  // namespace tailforge
