// Counts the allocations of the bench process for `allocations_per_request`, without LD_PRELOAD: the bench executable
// defines malloc and its siblings, so the dynamic linker binds every library's calls (the Swift runtime, Foundation,
// libcurl) to these, and each forwards to glibc's own implementation (__libc_malloc and friends, exported by glibc
// for exactly this). Counting costs one relaxed load of a flag while it is off; only the allocations scenario turns
// it on. Under a sanitizer the definitions are left out, since the sanitizer's runtime replaces the allocator.
#include "CMallocCounter.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MALLOC_COUNTER_DISABLED 1
#endif
#endif

#if defined(__linux__) && !defined(MALLOC_COUNTER_DISABLED)

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_bool counting;
static atomic_uint_fast64_t allocations;

static inline void count_one(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    }
}

void *malloc(size_t size) {
    count_one();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_one();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    count_one();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) { return EINVAL; }
    count_one();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) { return ENOMEM; }
    *result = pointer;
    return 0;
}

bool malloc_counter_available(void) { return true; }

void malloc_counter_start(void) {
    atomic_store(&allocations, 0);
    atomic_store(&counting, true);
}

uint64_t malloc_counter_stop(void) {
    atomic_store(&counting, false);
    return atomic_load(&allocations);
}

#else

bool malloc_counter_available(void) { return false; }
void malloc_counter_start(void) {}
uint64_t malloc_counter_stop(void) { return 0; }

#endif
