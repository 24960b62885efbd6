import Foundation

/// A request body read from a file: the transport uploads the file itself (with a `Content-Length`) on each
/// attempt, so a body of any size is never held in memory and can be sent again by a retry.
///
/// Put one in `URLRequest.httpBodyStream`. The multipart encoder uses it for large bodies, with a temporary file
/// that is deleted when the last request holding the stream goes away.
public final class FileBackedBodyStream: InputStream {

    /// The file holding the body.
    public let fileURL: URL
    /// Whether the file is deleted when this stream is deallocated.
    package let deletesFileOnDeinit: Bool

    /// Creates a body stream over a file.
    ///
    /// - Parameters:
    ///   - fileURL: The file holding the body.
    ///   - deletesFileOnDeinit: Delete the file when the stream goes away (for temporary files).
    /// - Returns: `nil` when the file cannot be opened.
    public init?(fileURL: URL, deletesFileOnDeinit: Bool = false) {
        self.fileURL = fileURL
        self.deletesFileOnDeinit = deletesFileOnDeinit
        super.init(url: fileURL)
    }

    deinit {
        if deletesFileOnDeinit {
            try? FileManager.default.removeItem(at: fileURL)
        }
    }

    /// The size of the file in bytes, or `nil` when it cannot be read.
    package var fileSize: Int? {
        Self.size(ofFileAt: fileURL)
    }

    /// The size of a file in bytes, or `nil` when it cannot be read.
    static func size(ofFileAt url: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue
    }
}
