import Foundation

/// One part of a ``HTTPTask/upload(parts:)`` multipart body.
///
/// A part without a MIME type is a plain form field; a part with one is a file part carrying a
/// `filename` and its `Content-Type`. Names and file names are escaped as HTML forms do (`"` → `%22`,
/// CR → `%0D`, LF → `%0A`), so no value can break the part's headers.
public struct HTTPMultipartTask: Sendable, Hashable {
    /// Where a part's bytes come from.
    public enum Content: Sendable, Hashable {
        /// Bytes in memory.
        case data(Data)
        /// A file read in chunks while the body is written, never loaded whole.
        case file(URL)
    }

    /// The bytes of the part.
    public var content: Content
    /// The form field name.
    public var name: String
    /// The file name sent with a file part; ignored for plain fields.
    public var filename: String
    /// The part's MIME type; `nil` makes it a plain form field.
    public var mimeType: String?

    /// The part's bytes when they are in memory; empty for a file part.
    public var data: Data {
        if case .data(let data) = content { return data }
        return Data()
    }

    /// The seed spelling of ``mimeType``, kept so code written against it compiles.
    @available(*, deprecated, renamed: "mimeType")
    public var mymetype: String? {
        get { mimeType }
        set { mimeType = newValue }
    }

    /// A part from bytes in memory (the seed initialiser, `mymetype` spelling kept).
    ///
    /// - Parameters:
    ///   - data: The part's bytes.
    ///   - name: The form field name.
    ///   - filename: The file name for a file part; defaults to `name`.
    ///   - mymetype: The MIME type; `nil` makes a plain field.
    @available(*, deprecated, renamed: "init(data:name:filename:mimeType:)")
    public init(data: Data, name: String, filename: String? = nil, mymetype: String?) {
        self.init(content: .data(data), name: name, filename: filename, mimeType: mymetype)
    }

    /// A part from bytes in memory.
    ///
    /// - Parameters:
    ///   - data: The part's bytes.
    ///   - name: The form field name.
    ///   - filename: The file name for a file part; defaults to `name`.
    ///   - mimeType: The MIME type; `nil` (the default) makes a plain field.
    public init(data: Data, name: String, filename: String? = nil, mimeType: String? = nil) {
        self.init(content: .data(data), name: name, filename: filename, mimeType: mimeType)
    }

    /// A file part streamed from disk.
    ///
    /// - Parameters:
    ///   - fileURL: The file to send; read in chunks when the request is built.
    ///   - name: The form field name.
    ///   - filename: The file name sent; defaults to the file's last path component.
    ///   - mimeType: The MIME type; defaults to `application/octet-stream`.
    public init(fileURL: URL, name: String, filename: String? = nil, mimeType: String = "application/octet-stream") {
        self.init(
            content: .file(fileURL),
            name: name,
            filename: filename ?? fileURL.lastPathComponent,
            mimeType: mimeType
        )
    }

    /// A part from any content.
    ///
    /// - Parameters:
    ///   - content: The bytes, in memory or in a file.
    ///   - name: The form field name.
    ///   - filename: The file name for a file part; defaults to `name`.
    ///   - mimeType: The MIME type; `nil` makes a plain field.
    public init(content: Content, name: String, filename: String? = nil, mimeType: String?) {
        self.content = content
        self.name = name
        self.filename = filename ?? name
        self.mimeType = mimeType
    }
}
