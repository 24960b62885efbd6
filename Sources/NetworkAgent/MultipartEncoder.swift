import Foundation

/// Writes `multipart/form-data` bodies (RFC 7578), in memory or, above a size, to a temporary file.
struct MultipartEncoder {
    let boundary: String
    let memoryThreshold: Int
    let temporaryDirectory: URL

    private static let chunkSize = 1 << 20

    /// The encoded body: bytes, or a stream over a temporary file deleted with the stream.
    enum Body {
        case data(Data)
        case file(FileBackedBodyStream)
    }

    func encode(_ parts: [HTTPMultipartTask]) throws(NetworkAgentError) -> Body {
        let headers = try parts.map { part throws(NetworkAgentError) in try header(for: part) }
        var total = Data("--\(boundary)--\r\n".utf8).count
        for (part, header) in zip(parts, headers) {
            total += header.count + 2 + (try size(of: part))
        }
        if total <= memoryThreshold {
            var body = Data(capacity: total)
            try write(parts, headers: headers) { body.append($0) }
            return .data(body)
        }
        return .file(try writeTemporaryFile(parts, headers: headers))
    }

    private func writeTemporaryFile(
        _ parts: [HTTPMultipartTask],
        headers: [Data]
    ) throws(NetworkAgentError)
        -> FileBackedBodyStream
    {
        let url = temporaryDirectory.appendingPathComponent("networkagent-multipart-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: url)
        else {
            throw NetworkAgentError(.encoding, "cannot create a temporary multipart file in \(temporaryDirectory.path)")
        }
        do {
            defer { try? handle.close() }
            try write(parts, headers: headers) { chunk throws(NetworkAgentError) in
                do { try handle.write(contentsOf: chunk) } catch {
                    throw NetworkAgentError(.encoding, "cannot write the multipart body", underlying: error)
                }
            }
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
        guard let stream = FileBackedBodyStream(fileURL: url, deletesFileOnDeinit: true) else {
            try? FileManager.default.removeItem(at: url)
            throw NetworkAgentError(.encoding, "cannot reopen the temporary multipart file")
        }
        return stream
    }

    private func write(
        _ parts: [HTTPMultipartTask],
        headers: [Data],
        to sink: (Data) throws(NetworkAgentError) -> Void
    ) throws(NetworkAgentError) {
        for (part, header) in zip(parts, headers) {
            try sink(header)
            switch part.content {
            case .data(let data):
                try sink(data)
            case .file(let url):
                guard let handle = try? FileHandle(forReadingFrom: url) else {
                    throw NetworkAgentError(.encoding, "cannot read multipart file \(url.path)")
                }
                defer { try? handle.close() }
                while true {
                    let chunk: Data?
                    do { chunk = try handle.read(upToCount: Self.chunkSize) } catch {
                        throw NetworkAgentError(.encoding, "cannot read multipart file \(url.path)", underlying: error)
                    }
                    guard let chunk, !chunk.isEmpty else { break }
                    try sink(chunk)
                }
            }
            try sink(Data("\r\n".utf8))
        }
        try sink(Data("--\(boundary)--\r\n".utf8))
    }

    private func size(of part: HTTPMultipartTask) throws(NetworkAgentError) -> Int {
        switch part.content {
        case .data(let data):
            return data.count
        case .file(let url):
            guard let size = FileBackedBodyStream.size(ofFileAt: url) else {
                throw NetworkAgentError(.encoding, "cannot read multipart file \(url.path)")
            }
            return size
        }
    }

    /// The boundary line and part headers, ending with the blank line before the part's bytes.
    private func header(for part: HTTPMultipartTask) throws(NetworkAgentError) -> Data {
        var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escape(part.name))\""
        if let mimeType = part.mimeType {
            try HTTPHeaderValidator.validate(name: "Content-Type", value: mimeType)
            text += "; filename=\"\(Self.escape(part.filename))\"\r\nContent-Type: \(mimeType)"
        }
        text += "\r\n\r\n"
        return Data(text.utf8)
    }

    /// Escapes a name or file name as the HTML standard's multipart/form-data encoding does.
    static func escape(_ value: String) -> String {
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
