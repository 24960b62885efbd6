import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension GzipPlugin {
    /// A `Content-Encoding` this plugin decodes.
    enum ContentCoding: String {
        case gzip
        case deflate

        /// The single gzip, x-gzip or deflate coding a header names (ignoring `identity`), or `nil` for anything
        /// else: no coding, another coding such as `br`, or several codings stacked.
        init?(header: String) {
            let codings = header.split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                .filter { !$0.isEmpty && $0 != "identity" }
            guard codings.count == 1, let coding = codings.first else {
                return nil
            }
            switch coding {
            case "gzip", "x-gzip": self = .gzip
            case "deflate": self = .deflate
            default: return nil
            }
        }
    }

    /// The response with its body decoded and its headers made consistent with it, or unchanged.
    ///
    /// - Parameters:
    ///   - data: The body as the transport returned it.
    ///   - response: The response as the transport returned it.
    ///   - transportDecodes: Whether the transport has certainly decoded the body already (URLSession).
    func decode(
        _ data: Data,
        response: URLResponse,
        transportDecodes: Bool
    ) throws -> (data: Data, response: URLResponse) {
        // An empty body is left alone: the headers of a HEAD, 204 or 304 response describe a representation that
        // was not sent, and a streamed 2xx body goes to the caller without passing through the chain.
        guard !data.isEmpty,
            let http = response as? HTTPURLResponse,
            // `value(forHTTPHeaderField:)`'s answer, without its lowercasing of every field name per call.
            let header = http.headerField("Content-Encoding"),
            let coding = ContentCoding(header: header)
        else {
            return (data: data, response: response)
        }
        let inflated: (data: Data, format: InflateFormat)?
        do {
            inflated = transportDecodes ? nil : try inflateIfCompressed(data, coding: coding)
        } catch {
            Self.emit("response_inflate_failed", ["encoding": coding.rawValue, "reason": error.code.description])
            throw NetworkAgentError(
                .invalidResponse,
                "the \(coding.rawValue) body of \(http.url?.absoluteString ?? "?") does not decode: \(error.message)",
                underlying: error,
                response: http,
                data: data
            )
        }
        guard let inflated else {
            Self.emit("response_headers_normalized", ["encoding": coding.rawValue])
            return (data: data, response: Self.normalized(http, bodySize: data.count))
        }
        Self.emit(
            "response_inflated",
            [
                "encoding": coding.rawValue, "format": "\(inflated.format)", "bytes_before": "\(data.count)",
                "bytes_after": "\(inflated.data.count)",
            ]
        )
        return (data: inflated.data, response: Self.normalized(http, bodySize: inflated.data.count))
    }

    /// The inflated body and its format, or `nil` when `data` is not compressed (a transport decoded it already).
    ///
    /// gzip and zlib are recognized by their headers. Raw deflate has none, so for `deflate` a body that is neither
    /// is inflated as raw deflate on trial: if that decodes completely it was raw deflate, and if it fails the body
    /// is taken as plain, except when a limit stopped it (plain text never inflates past a limit).
    private func inflateIfCompressed(
        _ data: Data,
        coding: ContentCoding
    ) throws(GzipPlugin.Error) -> (data: Data, format: InflateFormat)? {
        if let format = Inflater.isCompressed(data) {
            return (try Inflater.decompress(data, format: format, limits: limits), format)
        }
        guard coding == .deflate else {
            return nil
        }
        do {
            return (try Inflater.decompress(data, format: .raw, limits: limits), .raw)
        } catch  where error.code == .outputLimitExceeded || error.code == .ratioLimitExceeded {
            throw error
        } catch {
            return nil
        }
    }

    /// A copy of `response` without `Content-Encoding` and, if it had a `Content-Length`, with `bodySize` in it. It
    /// keeps the transport's `transferTimings`, which an outer metrics plugin records.
    static func normalized(_ response: HTTPURLResponse, bodySize: Int) -> HTTPURLResponse {
        var fields: [String: String] = [:]
        var hadLength = false
        for (key, value) in response.allHeaderFields {
            guard let name = key as? String else {
                continue
            }
            switch name.lowercased() {
            case "content-encoding":
                continue
            case "content-length":
                hadLength = true
            default:
                fields[name] = "\(value)"
            }
        }
        if hadLength {
            fields["Content-Length"] = "\(bodySize)"
        }
        guard let url = response.url,
            let copy = HTTPURLResponse.withTransferTimings(
                response.transferTimings,
                url: url,
                statusCode: response.statusCode,
                httpVersion: "HTTP/1.1",
                headerFields: fields
            )
        else {
            return response
        }
        return copy
    }
}
