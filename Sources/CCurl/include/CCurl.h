/*
 * CCurl: the part of libcurl's stable ABI that NetworkAgentCurl uses, declared here so that the package builds
 * without libcurl's development headers (only the shared library, libcurl.so.4, which FoundationNetworking needs
 * too). Every number is computed as libcurl's documentation defines it; the CCurlConstantTests test compares each
 * one with the real header when that is installed.
 *
 * curl_easy_setopt, curl_easy_getinfo, curl_multi_setopt and curl_share_setopt are C variadics, which Swift cannot
 * call: the static inline wrappers below pass one argument of one type each.
 */
#ifndef CCURL_H
#define CCURL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handles. */
typedef void CURL;
typedef void CURLM;
typedef void CURLSH;

/* A 64-bit signed integer, as libcurl's curl_off_t on every 64-bit platform it supports. */
typedef long long curl_off_t;

/* Result codes of easy functions (CURLcode). Only those the transport names; any other value may arrive. */
typedef enum {
    CURLE_OK = 0,
    CURLE_UNSUPPORTED_PROTOCOL = 1,
    CURLE_FAILED_INIT = 2,
    CURLE_URL_MALFORMAT = 3,
    CURLE_NOT_BUILT_IN = 4,
    CURLE_COULDNT_RESOLVE_PROXY = 5,
    CURLE_COULDNT_RESOLVE_HOST = 6,
    CURLE_COULDNT_CONNECT = 7,
    CURLE_WEIRD_SERVER_REPLY = 8,
    CURLE_HTTP2 = 16,
    CURLE_PARTIAL_FILE = 18,
    CURLE_WRITE_ERROR = 23,
    CURLE_READ_ERROR = 26,
    CURLE_OUT_OF_MEMORY = 27,
    CURLE_OPERATION_TIMEDOUT = 28,
    CURLE_SSL_CONNECT_ERROR = 35,
    CURLE_ABORTED_BY_CALLBACK = 42,
    CURLE_BAD_FUNCTION_ARGUMENT = 43,
    CURLE_UNKNOWN_OPTION = 48,
    CURLE_GOT_NOTHING = 52,
    CURLE_SEND_ERROR = 55,
    CURLE_RECV_ERROR = 56,
    CURLE_SSL_CERTPROBLEM = 58,
    CURLE_SSL_CIPHER = 59,
    CURLE_PEER_FAILED_VERIFICATION = 60,
    CURLE_BAD_CONTENT_ENCODING = 61,
    CURLE_SEND_FAIL_REWIND = 65,
    CURLE_SSL_CACERT_BADFILE = 77,
    CURLE_SSL_SHUTDOWN_FAILED = 80,
    CURLE_SSL_CRL_BADFILE = 82,
    CURLE_SSL_ISSUER_ERROR = 83,
    CURLE_SSL_PINNEDPUBKEYNOTMATCH = 90,
    CURLE_SSL_INVALIDCERTSTATUS = 91,
    CURLE_HTTP2_STREAM = 92,
    CURLE_PROXY = 97,
    CURLE_SSL_CLIENTCERT = 98,
    CURLE_CCURL_FORCE_INT = 0x7fffffff
} CURLcode;

/* Result codes of multi functions (CURLMcode). */
typedef enum {
    CURLM_CALL_MULTI_PERFORM = -1,
    CURLM_OK = 0,
    CURLM_BAD_HANDLE = 1,
    CURLM_BAD_EASY_HANDLE = 2,
    CURLM_OUT_OF_MEMORY = 3,
    CURLM_INTERNAL_ERROR = 4,
    CURLM_CCURL_FORCE_INT = 0x7fffffff
} CURLMcode;

/* Option type bases (CURLOPTTYPE_*). */
#define CURLOPTTYPE_LONG 0
#define CURLOPTTYPE_OBJECTPOINT 10000
#define CURLOPTTYPE_FUNCTIONPOINT 20000
#define CURLOPTTYPE_OFF_T 30000
#define CURLOPTTYPE_BLOB 40000

/* Easy options (CURLoption): base of the argument's type plus the option's number. */
typedef enum {
    CURLOPT_WRITEDATA = CURLOPTTYPE_OBJECTPOINT + 1,
    CURLOPT_URL = CURLOPTTYPE_OBJECTPOINT + 2,
    CURLOPT_PROXY = CURLOPTTYPE_OBJECTPOINT + 4,
    CURLOPT_READDATA = CURLOPTTYPE_OBJECTPOINT + 9,
    CURLOPT_ERRORBUFFER = CURLOPTTYPE_OBJECTPOINT + 10,
    CURLOPT_WRITEFUNCTION = CURLOPTTYPE_FUNCTIONPOINT + 11,
    CURLOPT_READFUNCTION = CURLOPTTYPE_FUNCTIONPOINT + 12,
    CURLOPT_USERAGENT = CURLOPTTYPE_OBJECTPOINT + 18,
    CURLOPT_LOW_SPEED_LIMIT = CURLOPTTYPE_LONG + 19,
    CURLOPT_LOW_SPEED_TIME = CURLOPTTYPE_LONG + 20,
    CURLOPT_HTTPHEADER = CURLOPTTYPE_OBJECTPOINT + 23,
    CURLOPT_HEADERDATA = CURLOPTTYPE_OBJECTPOINT + 29,
    CURLOPT_COOKIEFILE = CURLOPTTYPE_OBJECTPOINT + 31,
    CURLOPT_CUSTOMREQUEST = CURLOPTTYPE_OBJECTPOINT + 36,
    CURLOPT_NOPROGRESS = CURLOPTTYPE_LONG + 43,
    CURLOPT_NOBODY = CURLOPTTYPE_LONG + 44,
    CURLOPT_UPLOAD = CURLOPTTYPE_LONG + 46,
    CURLOPT_FOLLOWLOCATION = CURLOPTTYPE_LONG + 52,
    CURLOPT_XFERINFODATA = CURLOPTTYPE_OBJECTPOINT + 57,
    CURLOPT_SSL_VERIFYPEER = CURLOPTTYPE_LONG + 64,
    CURLOPT_CAINFO = CURLOPTTYPE_OBJECTPOINT + 65,
    CURLOPT_HEADERFUNCTION = CURLOPTTYPE_FUNCTIONPOINT + 79,
    CURLOPT_HTTPGET = CURLOPTTYPE_LONG + 80,
    CURLOPT_SSL_VERIFYHOST = CURLOPTTYPE_LONG + 81,
    CURLOPT_COOKIEJAR = CURLOPTTYPE_OBJECTPOINT + 82,
    CURLOPT_HTTP_VERSION = CURLOPTTYPE_LONG + 84,
    CURLOPT_NOSIGNAL = CURLOPTTYPE_LONG + 99,
    CURLOPT_SHARE = CURLOPTTYPE_OBJECTPOINT + 100,
    CURLOPT_PRIVATE = CURLOPTTYPE_OBJECTPOINT + 103,
    CURLOPT_INFILESIZE_LARGE = CURLOPTTYPE_OFF_T + 115,
    CURLOPT_PROTOCOLS = CURLOPTTYPE_LONG + 181,
    CURLOPT_TCP_NODELAY = CURLOPTTYPE_LONG + 121,
    CURLOPT_TIMEOUT_MS = CURLOPTTYPE_LONG + 155,
    CURLOPT_CONNECTTIMEOUT_MS = CURLOPTTYPE_LONG + 156,
    CURLOPT_SEEKFUNCTION = CURLOPTTYPE_FUNCTIONPOINT + 167,
    CURLOPT_SEEKDATA = CURLOPTTYPE_OBJECTPOINT + 168,
    CURLOPT_XFERINFOFUNCTION = CURLOPTTYPE_FUNCTIONPOINT + 219,
    CURLOPT_PINNEDPUBLICKEY = CURLOPTTYPE_OBJECTPOINT + 230,
    CURLOPT_PIPEWAIT = CURLOPTTYPE_LONG + 237,
    CURLOPT_SUPPRESS_CONNECT_HEADERS = CURLOPTTYPE_LONG + 265,
    CURLOPT_CCURL_FORCE_INT = 0x7fffffff
} CURLoption;

/* Bits of CURLOPT_PROTOCOLS. */
#define CURLPROTO_HTTP (1 << 0)
#define CURLPROTO_HTTPS (1 << 1)

/* Values of CURLOPT_HTTP_VERSION. */
#define CURL_HTTP_VERSION_NONE 0L
#define CURL_HTTP_VERSION_1_0 1L
#define CURL_HTTP_VERSION_1_1 2L
#define CURL_HTTP_VERSION_2_0 3L
#define CURL_HTTP_VERSION_2TLS 4L

/* Info type bases (CURLINFO_*). */
#define CURLINFO_STRING 0x100000
#define CURLINFO_LONG 0x200000
#define CURLINFO_DOUBLE 0x300000
#define CURLINFO_SLIST 0x400000
#define CURLINFO_OFF_T 0x600000

/* Transfer information (CURLINFO): base of the value's type plus the info's number. */
typedef enum {
    CURLINFO_EFFECTIVE_URL = CURLINFO_STRING + 1,
    CURLINFO_RESPONSE_CODE = CURLINFO_LONG + 2,
    CURLINFO_SSL_VERIFYRESULT = CURLINFO_LONG + 13,
    CURLINFO_PRIVATE = CURLINFO_STRING + 21,
    CURLINFO_OS_ERRNO = CURLINFO_LONG + 25,
    CURLINFO_CONTENT_LENGTH_DOWNLOAD_T = CURLINFO_OFF_T + 15,
    CURLINFO_HTTP_VERSION = CURLINFO_LONG + 46,
    CURLINFO_TOTAL_TIME_T = CURLINFO_OFF_T + 50,
    CURLINFO_NAMELOOKUP_TIME_T = CURLINFO_OFF_T + 51,
    CURLINFO_CONNECT_TIME_T = CURLINFO_OFF_T + 52,
    CURLINFO_PRETRANSFER_TIME_T = CURLINFO_OFF_T + 53,
    CURLINFO_STARTTRANSFER_TIME_T = CURLINFO_OFF_T + 54,
    CURLINFO_APPCONNECT_TIME_T = CURLINFO_OFF_T + 56,
    CURLINFO_CCURL_FORCE_INT = 0x7fffffff
} CURLINFO;

/* Multi options (CURLMoption). */
typedef enum {
    CURLMOPT_PIPELINING = CURLOPTTYPE_LONG + 3,
    CURLMOPT_MAXCONNECTS = CURLOPTTYPE_LONG + 6,
    CURLMOPT_MAX_HOST_CONNECTIONS = CURLOPTTYPE_LONG + 7,
    CURLMOPT_MAX_TOTAL_CONNECTIONS = CURLOPTTYPE_LONG + 13,
    CURLMOPT_MAX_CONCURRENT_STREAMS = CURLOPTTYPE_LONG + 16,
    CURLMOPT_CCURL_FORCE_INT = 0x7fffffff
} CURLMoption;

/* Bits of CURLMOPT_PIPELINING. */
#define CURLPIPE_NOTHING 0L
#define CURLPIPE_HTTP1 1L
#define CURLPIPE_MULTIPLEX 2L

/* Share interface (cookies shared between the easy handles of one transport). */
typedef enum {
    CURLSHOPT_SHARE = 1,
    CURLSHOPT_UNSHARE = 2,
    CURLSHOPT_CCURL_FORCE_INT = 0x7fffffff
} CURLSHoption;
typedef enum {
    CURLSHE_OK = 0,
    CURLSHE_CCURL_FORCE_INT = 0x7fffffff
} CURLSHcode;
#define CURL_LOCK_DATA_COOKIE 2

/* curl_global_init flags. */
#define CURL_GLOBAL_SSL (1 << 0)
#define CURL_GLOBAL_WIN32 (1 << 1)
#define CURL_GLOBAL_ALL (CURL_GLOBAL_SSL | CURL_GLOBAL_WIN32)

/* Callback return values. */
#define CURL_WRITEFUNC_PAUSE 0x10000001
#define CURL_READFUNC_ABORT 0x10000000
#define CURL_READFUNC_PAUSE 0x10000001
#define CURL_SEEKFUNC_OK 0
#define CURL_SEEKFUNC_FAIL 1
#define CURL_SEEKFUNC_CANTSEEK 2

/* curl_easy_pause bits. */
#define CURLPAUSE_RECV (1 << 0)
#define CURLPAUSE_SEND (1 << 2)
#define CURLPAUSE_ALL (CURLPAUSE_RECV | CURLPAUSE_SEND)
#define CURLPAUSE_CONT 0

/* Header lists. */
struct curl_slist {
    char *data;
    struct curl_slist *next;
};

/* Messages from curl_multi_info_read. */
typedef enum {
    CURLMSG_NONE = 0,
    CURLMSG_DONE = 1,
    CURLMSG_CCURL_FORCE_INT = 0x7fffffff
} CURLMSG;

struct CURLMsg {
    CURLMSG msg;
    CURL *easy_handle;
    union {
        void *whatever;
        CURLcode result;
    } data;
};
typedef struct CURLMsg CURLMsg;

/* curl_version_info: the fields of the first six ages, in order (libcurl 7.66 and later return at least these). */
typedef enum {
    CURLVERSION_FIRST = 0,
    CURLVERSION_SIXTH = 5,
    CURLVERSION_NOW_CCURL = 5,
    CURLVERSION_CCURL_FORCE_INT = 0x7fffffff
} CURLversion;

typedef struct curl_version_info_data {
    CURLversion age;
    const char *version;
    unsigned int version_num;
    const char *host;
    int features;
    const char *ssl_version;
    long ssl_version_num;
    const char *libz_version;
    const char *const *protocols;
    const char *ares;
    int ares_num;
    const char *libidn;
    int iconv_ver_num;
    const char *libssh_version;
    unsigned int brotli_ver_num;
    const char *brotli_version;
    unsigned int nghttp2_ver_num;
    const char *nghttp2_version;
    const char *quic_version;
} curl_version_info_data;

/* Feature bits of curl_version_info_data.features. */
#define CURL_VERSION_IPV6 (1 << 0)
#define CURL_VERSION_SSL (1 << 2)
#define CURL_VERSION_LIBZ (1 << 3)
#define CURL_VERSION_ASYNCHDNS (1 << 7)
#define CURL_VERSION_HTTP2 (1 << 16)

/* Callback types. */
typedef size_t (*ccurl_data_callback)(char *buffer, size_t size, size_t count, void *userdata);
typedef int (*ccurl_xferinfo_callback)(void *userdata, curl_off_t download_total, curl_off_t download_now,
                                       curl_off_t upload_total, curl_off_t upload_now);
typedef int (*ccurl_seek_callback)(void *userdata, curl_off_t offset, int origin);

/* Functions of libcurl. */
CURLcode curl_global_init(long flags);
curl_version_info_data *curl_version_info(CURLversion age);
const char *curl_easy_strerror(CURLcode code);
const char *curl_multi_strerror(CURLMcode code);

CURL *curl_easy_init(void);
void curl_easy_cleanup(CURL *handle);
void curl_easy_reset(CURL *handle);
CURLcode curl_easy_pause(CURL *handle, int bitmask);
CURLcode curl_easy_setopt(CURL *handle, CURLoption option, ...);
CURLcode curl_easy_getinfo(CURL *handle, CURLINFO info, ...);

CURLM *curl_multi_init(void);
CURLMcode curl_multi_cleanup(CURLM *multi);
CURLMcode curl_multi_add_handle(CURLM *multi, CURL *handle);
CURLMcode curl_multi_remove_handle(CURLM *multi, CURL *handle);
CURLMcode curl_multi_perform(CURLM *multi, int *running_handles);
CURLMcode curl_multi_poll(CURLM *multi, void *extra_fds, unsigned int extra_nfds, int timeout_ms, int *numfds);
CURLMcode curl_multi_wakeup(CURLM *multi);
CURLMsg *curl_multi_info_read(CURLM *multi, int *msgs_in_queue);
CURLMcode curl_multi_setopt(CURLM *multi, CURLMoption option, ...);

CURLSH *curl_share_init(void);
CURLSHcode curl_share_cleanup(CURLSH *share);
CURLSHcode curl_share_setopt(CURLSH *share, CURLSHoption option, ...);

struct curl_slist *curl_slist_append(struct curl_slist *list, const char *string);
void curl_slist_free_all(struct curl_slist *list);

/* Typed, non-variadic wrappers (Swift cannot call C variadics). */
static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_data_callback(CURL *handle, CURLoption option, ccurl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_xferinfo_callback(CURL *handle, ccurl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
static inline CURLcode ccurl_easy_setopt_seek_callback(CURL *handle, ccurl_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}
static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLSHcode ccurl_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}

#ifdef __cplusplus
}
#endif

#endif /* CCURL_H */
