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

    static func apply(
        to transfer: CurlTransfer,
        easy: CurlEasyHandle,
        configuration: CurlTransport.Configuration,
        share: UnsafeMutableRawPointer?
    ) {
        let handle = easy.pointer
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        _ = ccurl_easy_setopt_string(handle, CURLOPT_URL, transfer.urlString)
        _ = ccurl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = ccurl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = ccurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, easy.errorBuffer)
        _ = ccurl_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, curlHeaderCallback)
        _ = ccurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
        _ = ccurl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, curlWriteCallback)
        _ = ccurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        let version =
            configuration.httpVersion == .http1 ? CURL_HTTP_VERSION_1_1 : CURL_HTTP_VERSION_2TLS
        _ = ccurl_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, version)
        if configuration.httpVersion == .http2, transfer.isHTTPS {
            // Wait for a connection being set up that may multiplex (HTTP/2) rather than open another one.
            _ = ccurl_easy_setopt_long(handle, CURLOPT_PIPEWAIT, 1)
        }
        if let connect = configuration.connectTimeout {
            _ = ccurl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(connect))
        }
        if let stall = configuration.stallTimeout {
            _ = ccurl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, max(1, configuration.stallBytesPerSecond))
            _ = ccurl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, Int(stall.timeInterval.rounded(.up))))
        }
        if transfer.timeoutMilliseconds > 0 {
            _ = ccurl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, transfer.timeoutMilliseconds)
        }
        if let caBundle = configuration.caBundle {
            _ = ccurl_easy_setopt_string(handle, CURLOPT_CAINFO, caBundle.path)
        }
        if let pin = configuration.pinnedPublicKey {
            _ = ccurl_easy_setopt_string(handle, CURLOPT_PINNEDPUBLICKEY, pin)
        }
        if let proxy = configuration.proxy {
            _ = ccurl_easy_setopt_string(handle, CURLOPT_PROXY, proxy)
            _ = ccurl_easy_setopt_long(handle, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        }
        if let share {
            _ = ccurl_easy_setopt_pointer(handle, CURLOPT_SHARE, share)
            // "" turns the cookie engine on without reading a file.
            _ = ccurl_easy_setopt_string(handle, CURLOPT_COOKIEFILE, "")
        }
        applyMethodAndBody(transfer, handle: handle, context: context)
        _ = ccurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, transfer.slist)
        if transfer.progressHandler != nil {
            _ = ccurl_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
            _ = ccurl_easy_setopt_xferinfo_callback(handle, curlProgressCallback)
            _ = ccurl_easy_setopt_pointer(handle, CURLOPT_XFERINFODATA, context)
        }
    }

    private static func applyMethodAndBody(
        _ transfer: CurlTransfer,
        handle: UnsafeMutableRawPointer,
        context: UnsafeMutableRawPointer
    ) {
        switch transfer.method {
        case "GET":
            _ = ccurl_easy_setopt_long(handle, CURLOPT_HTTPGET, 1)
            return
        case "HEAD":
            _ = ccurl_easy_setopt_long(handle, CURLOPT_NOBODY, 1)
            return
        default:
            _ = ccurl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, transfer.method)
        }
        let size: Int
        switch transfer.body {
        case .none:
            // A POST, PUT or PATCH without a body still says so with `Content-Length: 0`; other methods send none.
            guard ["POST", "PUT", "PATCH"].contains(transfer.method) else { return }
            size = 0
        case .data(let data): size = data.count
        case .file(_, let fileSize): size = fileSize
        case .stream: size = -1
        }
        _ = ccurl_easy_setopt_long(handle, CURLOPT_UPLOAD, 1)
        _ = ccurl_easy_setopt_off_t(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(size))
        _ = ccurl_easy_setopt_data_callback(handle, CURLOPT_READFUNCTION, curlReadCallback)
        _ = ccurl_easy_setopt_pointer(handle, CURLOPT_READDATA, context)
        _ = ccurl_easy_setopt_seek_callback(handle, curlSeekCallback)
        _ = ccurl_easy_setopt_pointer(handle, CURLOPT_SEEKDATA, context)
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
