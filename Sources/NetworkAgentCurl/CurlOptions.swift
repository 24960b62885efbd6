import CCurl
import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Sets a reset easy handle up for a transfer, and reads what libcurl measured.
enum CurlOptions {
    /// The `User-Agent` sent when the request has none.
    static let defaultUserAgent = "NetworkAgentCurl libcurl/\(CurlRuntime.version)"
    /// The header line of ``defaultUserAgent``.
    static let defaultUserAgentLine = "User-Agent: \(defaultUserAgent)"

    /// Sets the reset `easy` handle up for `transfer`; returns what libcurl refused.
    ///
    /// Every option's result is checked. A refused option the request cannot go without (see ``isBestEffort(_:)``)
    /// is returned in ``CurlOptionResults/refused``, and the engine fails the request before anything is sent.
    ///
    /// With `reusing`, the handle was not reset after a plain transfer (see ``isPlain(_:)``) that this engine set up
    /// in full, and `transfer` is plain too: every option but those that differ between two plain transfers (URL,
    /// callback data, `PIPEWAIT`, timeout, header list) already has the value this function would give it, so only
    /// those are set. libcurl keeps an easy handle's options from one transfer to the next.
    static func apply(
        to transfer: CurlTransfer,
        easy: CurlEasyHandle,
        configuration: CurlTransport.Configuration,
        share: UnsafeMutableRawPointer?,
        reusing: Bool = false,
        override: (@Sendable (CURLoption) -> CURLcode?)? = nil
    ) -> CurlOptionResults {
        var set = CurlOptionSetter(handle: easy.pointer, override: override)
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        if reusing {
            set.string(CURLOPT_URL, transfer.urlString)
            set.pointer(CURLOPT_HEADERDATA, context)
            set.pointer(CURLOPT_WRITEDATA, context)
            // 0 is libcurl's default, which the full set-up leaves in place.
            set.long(CURLOPT_PIPEWAIT, configuration.httpVersion == .http2 && transfer.isHTTPS ? 1 : 0)
            set.long(CURLOPT_TIMEOUT_MS, timeout(of: transfer))
            set.slist(CURLOPT_HTTPHEADER, transfer.slist)
            return set.results
        }
        // Security first: trust, pinning, verification, protocols, redirects (the transport follows them itself).
        set.long(CURLOPT_SSL_VERIFYPEER, 1)
        set.long(CURLOPT_SSL_VERIFYHOST, 2)
        set.long(CURLOPT_PROTOCOLS, Int(CURLPROTO_HTTP | CURLPROTO_HTTPS))
        set.long(CURLOPT_FOLLOWLOCATION, 0)
        if let caBundle = configuration.caBundle { set.string(CURLOPT_CAINFO, caBundle.path) }
        if let pin = configuration.pinnedPublicKey { set.string(CURLOPT_PINNEDPUBLICKEY, pin) }
        if let proxy = configuration.proxy {
            set.string(CURLOPT_PROXY, proxy)
            set.long(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        }
        set.string(CURLOPT_URL, transfer.urlString)
        set.long(CURLOPT_NOSIGNAL, 1)
        set.pointer(CURLOPT_ERRORBUFFER, easy.errorBuffer)
        set.callback(CURLOPT_HEADERFUNCTION, curlHeaderCallback)
        set.pointer(CURLOPT_HEADERDATA, context)
        set.callback(CURLOPT_WRITEFUNCTION, curlWriteCallback)
        set.pointer(CURLOPT_WRITEDATA, context)
        let version = configuration.httpVersion == .http1 ? CURL_HTTP_VERSION_1_1 : CURL_HTTP_VERSION_2TLS
        set.long(CURLOPT_HTTP_VERSION, version)
        if configuration.httpVersion == .http2, transfer.isHTTPS {
            // Wait for a connection being set up that may multiplex (HTTP/2) rather than open another one.
            set.long(CURLOPT_PIPEWAIT, 1)
        }
        if let connect = configuration.connectTimeout {
            set.long(CURLOPT_CONNECTTIMEOUT_MS, milliseconds(connect))
        }
        if let stall = configuration.stallTimeout {
            set.long(CURLOPT_LOW_SPEED_LIMIT, max(1, configuration.stallBytesPerSecond))
            set.long(CURLOPT_LOW_SPEED_TIME, max(1, Int(stall.timeInterval.rounded(.up))))
        }
        if transfer.timeoutMilliseconds > 0 { set.long(CURLOPT_TIMEOUT_MS, timeout(of: transfer)) }
        if let share {
            set.pointer(CURLOPT_SHARE, share)
            // "" turns the cookie engine on without reading a file.
            set.string(CURLOPT_COOKIEFILE, "")
        }
        applyMethodAndBody(transfer, set: &set, context: context)
        set.slist(CURLOPT_HTTPHEADER, transfer.slist)
        if transfer.progress != nil {
            set.long(CURLOPT_NOPROGRESS, 0)
            set.record(
                CURLOPT_XFERINFOFUNCTION,
                ccurl_easy_setopt_xferinfo_callback(easy.pointer, curlProgressCallback)
            )
            set.pointer(CURLOPT_XFERINFODATA, context)
        }
        return set.results
    }

    /// CURLOPT_TIMEOUT_MS for `transfer`: what is left of its deadline after waiting for admission (the engine fails
    /// a transfer with none left), or 0 (none) without one.
    private static func timeout(of transfer: CurlTransfer) -> Int {
        guard transfer.timeoutMilliseconds > 0 else { return 0 }
        return max(1, transfer.timeoutMilliseconds - transfer.waitedMilliseconds)
    }

    /// Whether `transfer` is plain: a GET without a body or a progress handler whose whole response is collected.
    /// The options of two plain transfers of one engine differ only in those ``apply(to:easy:configuration:share:reusing:override:)``
    /// sets when `reusing`.
    static func isPlain(_ transfer: CurlTransfer) -> Bool {
        guard transfer.method == "GET", transfer.progress == nil, case .none = transfer.body else { return false }
        return transfer.state == .running(.flowing, .awaitingHead(.collect))
    }

    private static func applyMethodAndBody(
        _ transfer: CurlTransfer,
        set: inout CurlOptionSetter,
        context: UnsafeMutableRawPointer
    ) {
        switch transfer.method {
        case "GET":
            set.long(CURLOPT_HTTPGET, 1)
            return
        case "HEAD":
            set.long(CURLOPT_NOBODY, 1)
            return
        default:
            set.string(CURLOPT_CUSTOMREQUEST, transfer.method)
        }
        let size: Int
        switch transfer.body {
        case .none:
            // A POST, PUT or PATCH without a body still says so with `Content-Length: 0`; other methods send none.
            guard ["POST", "PUT", "PATCH"].contains(transfer.method) else { return }
            size = 0
        case .data(let data): size = data.count
        // A stream's size is unknown (-1): it is sent chunked.
        case .reader(let reader): size = reader.size ?? -1
        }
        set.long(CURLOPT_UPLOAD, 1)
        set.record(
            CURLOPT_INFILESIZE_LARGE,
            ccurl_easy_setopt_off_t(set.handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(size))
        )
        set.callback(CURLOPT_READFUNCTION, curlReadCallback)
        set.pointer(CURLOPT_READDATA, context)
        set.record(CURLOPT_SEEKFUNCTION, ccurl_easy_setopt_seek_callback(set.handle, curlSeekCallback))
        set.pointer(CURLOPT_SEEKDATA, context)
    }

    /// Whether a request may go without `option` when libcurl refuses it (the refusal is logged once): options that
    /// tune how it is sent (HTTP/2, waiting for a multiplexed connection, rewinding a body for a retry on a fresh
    /// connection, the proxy's CONNECT headers, progress reports, the shared cookie jar). Every other option fails
    /// the request: trust, pinning, verification, protocols and redirects, and those that make the request what
    /// was asked for (URL, method, headers, body, deadlines, callbacks).
    static func isBestEffort(_ option: CURLoption) -> Bool {
        switch option {
        case CURLOPT_HTTP_VERSION, CURLOPT_PIPEWAIT, CURLOPT_SEEKFUNCTION, CURLOPT_SEEKDATA,
            CURLOPT_SUPPRESS_CONNECT_HEADERS, CURLOPT_NOPROGRESS, CURLOPT_XFERINFOFUNCTION, CURLOPT_XFERINFODATA,
            CURLOPT_SHARE, CURLOPT_COOKIEFILE:
            true
        default:
            false
        }
    }

    /// libcurl's name of an option this module sets.
    static func name(of option: CURLoption) -> String {
        switch option {
        case CURLOPT_SSL_VERIFYPEER: "CURLOPT_SSL_VERIFYPEER"
        case CURLOPT_SSL_VERIFYHOST: "CURLOPT_SSL_VERIFYHOST"
        case CURLOPT_PROTOCOLS: "CURLOPT_PROTOCOLS"
        case CURLOPT_FOLLOWLOCATION: "CURLOPT_FOLLOWLOCATION"
        case CURLOPT_CAINFO: "CURLOPT_CAINFO"
        case CURLOPT_PINNEDPUBLICKEY: "CURLOPT_PINNEDPUBLICKEY"
        case CURLOPT_PROXY: "CURLOPT_PROXY"
        case CURLOPT_SUPPRESS_CONNECT_HEADERS: "CURLOPT_SUPPRESS_CONNECT_HEADERS"
        case CURLOPT_URL: "CURLOPT_URL"
        case CURLOPT_NOSIGNAL: "CURLOPT_NOSIGNAL"
        case CURLOPT_ERRORBUFFER: "CURLOPT_ERRORBUFFER"
        case CURLOPT_HEADERFUNCTION: "CURLOPT_HEADERFUNCTION"
        case CURLOPT_HEADERDATA: "CURLOPT_HEADERDATA"
        case CURLOPT_WRITEFUNCTION: "CURLOPT_WRITEFUNCTION"
        case CURLOPT_WRITEDATA: "CURLOPT_WRITEDATA"
        case CURLOPT_HTTP_VERSION: "CURLOPT_HTTP_VERSION"
        case CURLOPT_PIPEWAIT: "CURLOPT_PIPEWAIT"
        case CURLOPT_CONNECTTIMEOUT_MS: "CURLOPT_CONNECTTIMEOUT_MS"
        case CURLOPT_LOW_SPEED_LIMIT: "CURLOPT_LOW_SPEED_LIMIT"
        case CURLOPT_LOW_SPEED_TIME: "CURLOPT_LOW_SPEED_TIME"
        case CURLOPT_TIMEOUT_MS: "CURLOPT_TIMEOUT_MS"
        case CURLOPT_SHARE: "CURLOPT_SHARE"
        case CURLOPT_COOKIEFILE: "CURLOPT_COOKIEFILE"
        case CURLOPT_HTTPHEADER: "CURLOPT_HTTPHEADER"
        case CURLOPT_NOPROGRESS: "CURLOPT_NOPROGRESS"
        case CURLOPT_XFERINFOFUNCTION: "CURLOPT_XFERINFOFUNCTION"
        case CURLOPT_XFERINFODATA: "CURLOPT_XFERINFODATA"
        case CURLOPT_HTTPGET: "CURLOPT_HTTPGET"
        case CURLOPT_NOBODY: "CURLOPT_NOBODY"
        case CURLOPT_CUSTOMREQUEST: "CURLOPT_CUSTOMREQUEST"
        case CURLOPT_UPLOAD: "CURLOPT_UPLOAD"
        case CURLOPT_INFILESIZE_LARGE: "CURLOPT_INFILESIZE_LARGE"
        case CURLOPT_READFUNCTION: "CURLOPT_READFUNCTION"
        case CURLOPT_READDATA: "CURLOPT_READDATA"
        case CURLOPT_SEEKFUNCTION: "CURLOPT_SEEKFUNCTION"
        case CURLOPT_SEEKDATA: "CURLOPT_SEEKDATA"
        default: "CURLoption \(option.rawValue)"
        }
    }

    /// libcurl's phase times of the current transfer; `total` only when it has `complete`d.
    static func timings(of handle: UnsafeMutableRawPointer, complete: Bool) -> HTTPTransferTimings {
        func read(_ info: CURLINFO) -> Duration? {
            var value: curl_off_t = 0
            guard ccurl_easy_getinfo_off_t(handle, info, &value) == CURLE_OK, value > 0 else { return nil }
            return .microseconds(value)
        }
        return HTTPTransferTimings(
            nameLookup: read(CURLINFO_NAMELOOKUP_TIME_T),
            connect: read(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: read(CURLINFO_APPCONNECT_TIME_T),
            preTransfer: read(CURLINFO_PRETRANSFER_TIME_T),
            firstByte: read(CURLINFO_STARTTRANSFER_TIME_T),
            total: complete ? read(CURLINFO_TOTAL_TIME_T) : nil
        )
    }

    /// The X.509 verification result of the transfer's TLS connection (0 when verified or not TLS).
    static func verifyResult(of handle: UnsafeMutableRawPointer) -> Int {
        var value = 0
        return ccurl_easy_getinfo_long(handle, CURLINFO_SSL_VERIFYRESULT, &value) == CURLE_OK ? value : 0
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 1 }
        let (whole, overflow) = Int(clamping: seconds).multipliedReportingOverflow(by: 1000)
        guard !overflow, whole < Int.max / 2 else { return Int.max / 2 }
        return max(1, whole + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000))
    }
}

// MARK: - libcurl callbacks (engine thread)

private func transfer(_ context: UnsafeMutableRawPointer?) -> CurlTransfer? {
    context.map { Unmanaged<CurlTransfer>.fromOpaque($0).takeUnretainedValue() }
}

let curlHeaderCallback: ccurl_data_callback = { buffer, size, count, context in
    let length = size * count
    guard let transfer = transfer(context), let buffer else { return length }
    transfer.receiveHeader(UnsafeRawBufferPointer(start: buffer, count: length))
    return length
}

let curlWriteCallback: ccurl_data_callback = { buffer, size, count, context in
    let length = size * count
    guard let transfer = transfer(context), let buffer else { return 0 }
    return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: length))
}

let curlReadCallback: ccurl_data_callback = { buffer, size, count, context in
    guard let transfer = transfer(context), let buffer else { return Int(CURL_READFUNC_ABORT) }
    return transfer.readBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
}

let curlSeekCallback: ccurl_seek_callback = { context, offset, origin in
    guard let transfer = transfer(context), origin == SEEK_SET else { return CURL_SEEKFUNC_CANTSEEK }
    return transfer.seekBody(to: Int(offset)) ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_CANTSEEK
}

let curlProgressCallback: ccurl_xferinfo_callback = { context, downloadTotal, downloadNow, uploadTotal, uploadNow in
    transfer(context)?.reportProgress(
        downloadTotal: Int(downloadTotal),
        downloaded: Int(downloadNow),
        uploadTotal: Int(uploadTotal),
        uploaded: Int(uploadNow)
    )
    return 0
}
