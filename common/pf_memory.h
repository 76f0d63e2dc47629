/* pf_memory: how the long-running processes ask the allocator to behave. */
#ifndef PF_MEMORY_H
#define PF_MEMORY_H

/* Keeps buffers of up to tens of MB on the heap, and freed heap memory in the
 * process, instead of mapping and unmapping them per message. Pass outputs
 * are 0.5 to 64 MB and every hop allocates one or two: with glibc's defaults
 * each came from a fresh mmap() and its first touch page-faulted per 4 KiB,
 * which was the broker's largest cost per job. The price is that a process
 * keeps its peak heap (bounded by its message limits and queue lengths).
 * Call once at start, before other threads exist. No-op without glibc. */
void pf_memory_keep_large_buffers(void);

#endif
