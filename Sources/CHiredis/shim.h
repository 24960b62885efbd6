// hiredis, Redis's own C client, for NetworkAgentRedisCache (Debian: libhiredis-dev; Homebrew: hiredis).
//
// hiredis takes a command's arguments as `const char **` plus lengths, and hands replies back through a `void **`;
// these wrappers give Swift typed signatures for both.
#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H

#include <hiredis/hiredis.h>
#include <pthread.h>

/// The most elements a reply's array may announce: 2^20. A larger announcement is refused before anything is
/// allocated (the reader fails with REDIS_ERR_OOM), so a hostile or broken server cannot make hiredis allocate, then
/// free, billions of slots. The store's largest replies are a read (two items per variant) and a SCAN page.
#define CHIREDIS_MAXIMUM_ELEMENTS (1 << 20)

// hiredis 1.x bounds this with `maxelements`; 0.14 (Debian 12) has no such field, but its reader builds objects
// through replaceable functions. These are hiredis's own, with `createArray` wrapped by a bound check. (State lives
// in function-local statics: Swift emits the functions of this header, not its file-scope variables.)
typedef void *(*CHiredis_CreateArray)(const redisReadTask *, int);

typedef struct {
    redisReplyObjectFunctions functions;
    CHiredis_CreateArray defaultCreateArray;
} CHiredis_BoundedFunctions;

static inline CHiredis_BoundedFunctions *CHiredis_bounded(void) {
    static CHiredis_BoundedFunctions bounded;
    return &bounded;
}

static inline pthread_once_t *CHiredis_boundedOnce(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    return &once;
}

static void *CHiredis_boundedCreateArray(const redisReadTask *task, int elements) {
    CHiredis_CreateArray create = CHiredis_bounded()->defaultCreateArray;
    if (elements > CHIREDIS_MAXIMUM_ELEMENTS || create == NULL) {
        return NULL;
    }
    return create(task, elements);
}

static void CHiredis_makeBoundedFunctions(void) {
    redisReader *scratch = redisReaderCreate();
    if (scratch == NULL || scratch->fn == NULL) {
        // Without hiredis's own functions the context is refused: the store fails closed (every command fails).
        if (scratch != NULL) {
            redisReaderFree(scratch);
        }
        return;
    }
    CHiredis_BoundedFunctions *bounded = CHiredis_bounded();
    bounded->functions = *scratch->fn;
    bounded->defaultCreateArray = scratch->fn->createArray;
    bounded->functions.createArray = CHiredis_boundedCreateArray;
    redisReaderFree(scratch);
}

/// Makes the context's reader refuse arrays announcing more than CHIREDIS_MAXIMUM_ELEMENTS elements. Returns
/// REDIS_OK, or REDIS_ERR when the bounded functions could not be made (the context is then unusable: free it).
static inline int CHiredis_boundReplies(redisContext *_Nonnull context) {
    if (pthread_once(CHiredis_boundedOnce(), CHiredis_makeBoundedFunctions) != 0 || context->reader == NULL ||
        CHiredis_bounded()->defaultCreateArray == NULL) {
        return REDIS_ERR;
    }
    context->reader->fn = &CHiredis_bounded()->functions;
    return REDIS_OK;
}

/// Whether the context failed because a reply announced more than CHIREDIS_MAXIMUM_ELEMENTS elements (or memory ran
/// out building one).
static inline int CHiredis_refusedReply(const redisContext *_Nonnull context) {
    return context->err == REDIS_ERR_OOM;
}

/// Appends one command, whose arguments are binary-safe byte strings, to the context's output buffer (pipelining).
/// Returns REDIS_OK or REDIS_ERR.
static inline int CHiredis_append(redisContext *_Nonnull context, int count,
                                  const char *_Nonnull const *_Nonnull arguments, const size_t *_Nonnull lengths) {
    return redisAppendCommandArgv(context, count, (const char **)arguments, lengths);
}

/// Flushes the output buffer if needed and reads the next reply, blocking up to the context's timeout. Returns NULL
/// when the connection failed (`context->err` says why). The caller frees the reply with `freeReplyObject`.
static inline redisReply *_Nullable CHiredis_nextReply(redisContext *_Nonnull context) {
    void *reply = NULL;
    if (redisGetReply(context, &reply) != REDIS_OK) {
        return NULL;
    }
    return (redisReply *)reply;
}

#endif
