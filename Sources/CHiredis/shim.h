// hiredis, Redis's own C client, for NetworkAgentRedisCache (Debian: libhiredis-dev; Homebrew: hiredis).
//
// hiredis takes a command's arguments as `const char **` plus lengths, and hands replies back through a `void **`;
// these wrappers give Swift typed signatures for both.
#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H

#include <hiredis/hiredis.h>

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
