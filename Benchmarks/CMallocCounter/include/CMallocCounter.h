#ifndef CMALLOCCOUNTER_H
#define CMALLOCCOUNTER_H

#include <stdbool.h>
#include <stdint.h>

/// Whether this build counts allocations (not under a sanitizer, which brings its own allocator).
bool malloc_counter_available(void);

/// Starts counting the allocations of every thread (malloc, calloc, realloc, and the aligned ones) from zero.
void malloc_counter_start(void);

/// Stops counting and returns the allocations made since malloc_counter_start.
uint64_t malloc_counter_stop(void);

#endif
