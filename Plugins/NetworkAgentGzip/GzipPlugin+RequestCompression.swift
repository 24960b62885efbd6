import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension GzipPlugin {
    /// How much of a file-backed body is read and compressed at a time.
    static let fileChunkSize = 256 * 1024

    /// Gzip-compresses the request's body in place, or leaves the request unchanged when it should not be compressed.
    /// In place, so that a request the caller holds alone is changed without Foundation's copy of it.
    func compressBody(of request: inout URLRequest) throws {
        // A request without a body (most are GETs) has nothing to compress: it is let go before the header searches,
        // each of which compares every field name of the request.
        guard compressesRequests else { return }
        let body = request.httpBody
        guard body != nil || request.httpBodyStream != nil,
            request.headerField("Content-Encoding") == nil,
            let contentType = request.headerField("Content-Type"),
            isCompressibleContentType(contentType)
        else {
            return
        }
        if let body {
            try compressData(body, of: &request)
        } else if let stream = request.httpBodyStream as? FileBackedBodyStream {
            try compressFile(stream, of: &request)
        }
        // Any other stream can be read only once and its size is unknown: it goes out as it is.
    }

    private func compressData(_ body: Data, of request: inout URLRequest) throws {
        guard body.count >= minimumBodySize else {
            return
        }
        let compressed: Data
        do {
            compressed = try Deflater.compress(body, format: .gzip, level: level)
        } catch {
            throw NetworkAgentError(
                .encoding,
                "gzip compression of the request body failed: \(error)",
                underlying: error
            )
        }
        guard compressed.count < body.count else {
            Self.emit("request_not_compressed", ["reason": "not_smaller", "body": "data"])
            return
        }
        request.httpBody = compressed
        Self.markCompressed(&request)
        Self.emit(
            "request_compressed",
            ["bytes_before": "\(body.count)", "bytes_after": "\(compressed.count)", "body": "data"]
        )
    }

    private func compressFile(_ stream: FileBackedBodyStream, of request: inout URLRequest) throws {
        guard let size = stream.fileSize, size >= minimumBodySize else {
            return
        }
        let output = temporaryDirectory.appendingPathComponent("networkagent-gzip-\(UUID().uuidString).gz")
        let compressedSize: Int?
        do {
            compressedSize = try Self.compressFile(at: stream.fileURL, to: output, level: level, sizeLimit: size)
        } catch {
            try? FileManager.default.removeItem(at: output)
            throw error
        }
        guard let compressedSize else {
            try? FileManager.default.removeItem(at: output)
            Self.emit("request_not_compressed", ["reason": "not_smaller", "body": "file"])
            return
        }
        guard let compressedStream = FileBackedBodyStream(fileURL: output, deletesFileOnDeinit: true) else {
            try? FileManager.default.removeItem(at: output)
            throw NetworkAgentError(.encoding, "cannot open the compressed copy of the request body")
        }
        request.httpBodyStream = compressedStream
        Self.markCompressed(&request)
        Self.emit(
            "request_compressed",
            ["bytes_before": "\(size)", "bytes_after": "\(compressedSize)", "body": "file"]
        )
    }

    /// Labels a request whose body was just compressed; the transport computes the new length itself.
    private static func markCompressed(_ request: inout URLRequest) {
        request.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
        request.setValue(nil, forHTTPHeaderField: "Content-Length")
    }

    /// Gzips the file at `input` into a new file at `output`, reading ``fileChunkSize`` bytes at a time.
    ///
    /// - Returns: The compressed size, or `nil` once the output reaches `sizeLimit` bytes (compression would not
    ///   make the body smaller, so the rest is not compressed).
    /// - Throws: ``/NetworkAgent/NetworkAgentError`` with code `encoding` on an I/O or zlib failure, `cancelled` when
    ///   the task is cancelled; the caller removes `output`.
    static func compressFile(at input: URL, to output: URL, level: Int, sizeLimit: Int) throws -> Int? {
        guard FileManager.default.createFile(atPath: output.path, contents: nil) else {
            throw NetworkAgentError(.encoding, "cannot create \(output.path) for the compressed request body")
        }
        do {
            let reader = try FileHandle(forReadingFrom: input)
            defer { try? reader.close() }
            let writer = try FileHandle(forWritingTo: output)
            defer { try? writer.close() }
            var deflater = try Deflater(format: .gzip, level: level)
            var written = 0
            while let chunk = try reader.read(upToCount: fileChunkSize), !chunk.isEmpty {
                if Task.isCancelled {
                    throw NetworkAgentError(.cancelled, "the request was cancelled while its body was compressed")
                }
                let compressed = try deflater.compress(chunk)
                try writer.write(contentsOf: compressed)
                written += compressed.count
                if written >= sizeLimit {
                    return nil
                }
            }
            let tail = try deflater.finish()
            try writer.write(contentsOf: tail)
            written += tail.count
            return written < sizeLimit ? written : nil
        } catch let error as NetworkAgentError {
            throw error
        } catch {
            throw NetworkAgentError(
                .encoding,
                "gzip compression of the request body file \(input.lastPathComponent) failed: \(error)",
                underlying: error
            )
        }
    }

    /// Emits a `gzip` event when someone listens.
    static func emit(_ name: String, _ attributes: @autoclosure () -> [String: String]) {
        guard NetworkAgentEvents.hasObservers else {
            return
        }
        NetworkAgentEvents.emit(NetworkAgentEvent(source: "gzip", name: name, attributes: attributes()))
    }
}
