import Foundation

/// What happens to a connection after a response.
enum ConnectionDisposition {
    /// Read the next request.
    case keepAlive
    /// Close normally (FIN).
    case close
    /// Close with `SO_LINGER` 0 (RST).
    case reset
    /// Stop sending, discard what the client still sends for a moment, then close, so it sees the error response.
    case drainAndClose
}

/// Writes one ``ServerResponse`` (or its fault) to a connected socket.
struct ResponseWriter {
    let fd: Int32
    let core: ServerCore

    /// Per-exchange facts that shape the response.
    struct Context {
        var isHead: Bool
        /// The connection closes after this response (client asked, server configured, or framing requires).
        var closeAfter: Bool
        /// The request was HTTP/1.0, which cannot receive chunked bodies.
        var isHTTP10: Bool
    }

    // MARK: - Normal responses

    func write(_ response: ServerResponse, context: Context) -> ConnectionDisposition {
        if response.delay > .zero {
            guard core.pause(for: response.delay, watching: fd) else { return .close }
        }
        if let fault = response.fault {
            return write(fault, response: response, context: context)
        }
        return writeNormally(response, padding: 0, context: context)
    }

    private func writeNormally(
        _ response: ServerResponse,
        padding: Int,
        context: Context
    ) -> ConnectionDisposition {
        var headers = response.headers
        let hasLength = contains(headers, "Content-Length")
        let hasTransferEncoding = contains(headers, "Transfer-Encoding")
        let statusForbidsBody = (100..<200).contains(response.status) || [204, 304].contains(response.status)
        let sendsBody = !context.isHead && !statusForbidsBody
        var closeAfter = context.closeAfter || tokens(of: headers, "Connection").contains("close")

        switch response.body {
        case .data(let data):
            if !hasLength && !hasTransferEncoding && !statusForbidsBody {
                headers.append(("Content-Length", String(data.count)))
            }
            addConnectionHeader(&headers, closeAfter: closeAfter, context: context)
            let head = encodeHead(status: response.status, headers: headers, padding: padding)
            guard sendsBody, !data.isEmpty else {
                return Socket.sendAll(fd, head) ? disposition(closeAfter) : .close
            }
            if data.count <= 64 * 1024 {
                return Socket.sendAll(fd, head + data) ? disposition(closeAfter) : .close
            }
            guard Socket.sendAll(fd, head), Socket.sendAll(fd, data) else { return .close }
            return disposition(closeAfter)

        case .chunked(let pieces, let interval):
            // HTTP/1.0 clients cannot decode chunked bodies: send the pieces raw and close to end the body.
            let framed = !hasLength && !context.isHTTP10
            if !framed && !hasLength { closeAfter = true }
            if framed && !hasTransferEncoding && !statusForbidsBody {
                headers.append(("Transfer-Encoding", "chunked"))
            }
            addConnectionHeader(&headers, closeAfter: closeAfter, context: context)
            guard Socket.sendAll(fd, encodeHead(status: response.status, headers: headers, padding: padding)) else {
                return .close
            }
            guard sendsBody else { return disposition(closeAfter) }
            guard writePieces(pieces, interval: interval, framed: framed) else { return .close }
            if framed {
                guard Socket.sendAll(fd, Data("0\r\n\r\n".utf8)) else { return .close }
            }
            return disposition(closeAfter)
        }
    }

    /// Writes the pieces (framed as chunks or raw), pausing `interval` between them.
    private func writePieces(_ pieces: [Data], interval: Duration, framed: Bool) -> Bool {
        for (index, piece) in pieces.enumerated() {
            if index > 0 && interval > .zero {
                guard core.pause(for: interval, watching: fd) else { return false }
            }
            if piece.isEmpty { continue }
            if framed {
                var chunk = Data(String(piece.count, radix: 16).utf8)
                chunk.append(contentsOf: [UInt8(ascii: "\r"), UInt8(ascii: "\n")])
                chunk.append(piece)
                chunk.append(contentsOf: [UInt8(ascii: "\r"), UInt8(ascii: "\n")])
                guard Socket.sendAll(fd, chunk) else { return false }
            } else {
                guard Socket.sendAll(fd, piece) else { return false }
            }
        }
        return true
    }

    private func disposition(_ closeAfter: Bool) -> ConnectionDisposition {
        closeAfter ? .close : .keepAlive
    }

    private func addConnectionHeader(
        _ headers: inout [(name: String, value: String)],
        closeAfter: Bool,
        context: Context
    ) {
        guard !contains(headers, "Connection") else { return }
        if closeAfter {
            headers.append(("Connection", "close"))
        } else if context.isHTTP10 {
            headers.append(("Connection", "keep-alive"))
        }
    }

    // MARK: - Faults

    private func write(
        _ fault: ServerResponse.Fault,
        response: ServerResponse,
        context: Context
    ) -> ConnectionDisposition {
        switch fault {
        case .closeBeforeResponse:
            return .close
        case .resetBeforeResponse:
            return .reset
        case .closeMidBody(let afterBytes):
            writePartialBody(response, afterBytes: afterBytes)
            return .close
        case .resetMidBody(let afterBytes):
            writePartialBody(response, afterBytes: afterBytes)
            // Give the client a moment to take the bytes in before the RST arrives.
            _ = core.pause(for: .milliseconds(20), watching: fd)
            return .reset
        case .truncatedChunked:
            var headers = response.headers
            if !contains(headers, "Transfer-Encoding") {
                headers.append(("Transfer-Encoding", "chunked"))
            }
            guard Socket.sendAll(fd, encodeHead(status: response.status, headers: headers, padding: 0)) else {
                return .close
            }
            switch response.body {
            case .data(let data):
                _ = writePieces([data], interval: .zero, framed: true)
            case .chunked(let pieces, let interval):
                _ = writePieces(pieces, interval: interval, framed: true)
            }
            return .close
        case .stall:
            _ = core.pause(for: nil, watching: fd)
            return .close
        case .malformedStatusLine:
            _ = Socket.sendAll(fd, Data("SPDY/0.9 ?!? not a status line\r\n\r\n".utf8))
            return .close
        case .oversizedHeaders(let bytes):
            return writeNormally(response, padding: bytes, context: context)
        }
    }

    /// Sends the head with the full `Content-Length` and the first `afterBytes` bytes of the body.
    private func writePartialBody(_ response: ServerResponse, afterBytes: Int) {
        let body: Data
        switch response.body {
        case .data(let data):
            body = data
        case .chunked(let pieces, _):
            body = pieces.reduce(into: Data()) { $0.append($1) }
        }
        var headers = response.headers
        if !contains(headers, "Content-Length") {
            headers.append(("Content-Length", String(body.count)))
        }
        var bytes = encodeHead(status: response.status, headers: headers, padding: 0)
        bytes.append(body.prefix(max(afterBytes, 0)))
        _ = Socket.sendAll(fd, bytes)
    }

    // MARK: - Encoding

    /// Encodes the status line and header fields; with `padding` > 0, adds `X-Padding-N` fields until the whole
    /// block is about `padding` bytes.
    func encodeHead(status: Int, headers: [(name: String, value: String)], padding: Int) -> Data {
        var text = "HTTP/1.1 \(status) \(Self.reasonPhrase(for: status))\r\n"
        for (name, value) in headers {
            text += "\(name): \(value)\r\n"
        }
        var head = Data(text.utf8)
        var index = 1
        // Each padding line is "X-Padding-N: " + filler + CRLF, at most 8 KiB; 2 bytes stay for the final CRLF.
        while head.count + 2 < padding {
            let prefix = "X-Padding-\(index): "
            let room = padding - 2 - head.count - prefix.utf8.count - 2
            let filler = max(1, min(room, 8 * 1024 - prefix.utf8.count - 2))
            head.append(contentsOf: Array(prefix.utf8))
            head.append(contentsOf: repeatElement(UInt8(ascii: "a"), count: filler))
            head.append(contentsOf: [UInt8(ascii: "\r"), UInt8(ascii: "\n")])
            index += 1
        }
        head.append(contentsOf: [UInt8(ascii: "\r"), UInt8(ascii: "\n")])
        return head
    }

    /// A plain-text error response that closes the connection.
    static func errorResponse(status: Int, message: String) -> Data {
        let body = "\(status) \(reasonPhrase(for: status)): \(message)\n"
        let text =
            "HTTP/1.1 \(status) \(reasonPhrase(for: status))\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\n"
            + "Connection: close\r\n\r\n" + body
        return Data(text.utf8)
    }

    private func contains(_ headers: [(name: String, value: String)], _ name: String) -> Bool {
        headers.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    private func tokens(of headers: [(name: String, value: String)], _ name: String) -> [String] {
        headers
            .filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            .flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }

    /// The reason phrase for a status code, or "Unknown".
    static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 422: "Unprocessable Content"
        case 425: "Too Early"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Unknown"
        }
    }
}
