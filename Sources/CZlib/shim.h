// Swift-callable wrappers around the parts of zlib that are C macros or need pointer casts.
//
// `deflateInit2` and `inflateInit2` are macros that pass ZLIB_VERSION and sizeof(z_stream) to the
// real `*_` functions; Swift cannot call macros, so these static inline functions do it instead.
// The setters exist because `next_in` is `Bytef *` or `const Bytef *` depending on ZLIB_CONST,
// and keeping the cast here lets Swift hand zlib a read-only pointer either way.
#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H

#include <zlib.h>

static inline int CZlib_deflateInit2(z_streamp strm, int level, int windowBits, int memLevel, int strategy) {
    return deflateInit2_(strm, level, Z_DEFLATED, windowBits, memLevel, strategy, ZLIB_VERSION, (int)sizeof(z_stream));
}

static inline int CZlib_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2_(strm, windowBits, ZLIB_VERSION, (int)sizeof(z_stream));
}

/// Points the stream's input at `bytes` (zlib never writes through `next_in`).
static inline void CZlib_setInput(z_streamp strm, const void *bytes, unsigned int count) {
    strm->next_in = (z_const Bytef *)bytes;
    strm->avail_in = count;
}

/// Points the stream's output at `bytes`.
static inline void CZlib_setOutput(z_streamp strm, void *bytes, unsigned int count) {
    strm->next_out = (Bytef *)bytes;
    strm->avail_out = count;
}

#endif
