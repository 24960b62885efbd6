import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What kind of body a request hands URLSession, as far as sending it a second time goes.
///
/// libcurl sends a request again by itself, on a fresh connection, when a reused keep-alive connection closes
/// before any response. It then asks FoundationNetworking to rewind the body, and FoundationNetworking cannot: an
/// in-memory or file body is not rewound at all (libcurl sends the head with its `Content-Length` and no body, and
/// the exchange hangs), and answering its `needNewBodyStream` call with a stream for such a body is a `fatalError`
/// in `_NativeProtocol.seekInputStream`. Only a one-shot `httpBodyStream` can be replaced, and the transport has no
/// second copy of one to give. So the transport stops such an attempt and either sends the request again itself
/// (in-memory and file bodies) or fails it (one-shot streams).
enum RequestBody: Sendable {
    /// No body, or an empty one: nothing to lose, libcurl's own re-send is correct.
    case none
    /// `httpBody`: sent again from memory, with its `Content-Length`.
    case inMemory
    /// A ``FileBackedBodyStream``, uploaded from its file with its `Content-Length`: sent again from the file.
    case file
    /// Any other `httpBodyStream`: read once, chunked, and gone after the first attempt.
    case oneShotStream

    /// Classifies the body of `request`.
    ///
    /// - Parameter request: The request about to be handed to URLSession.
    init(of request: URLRequest) {
        if request.httpBodyStream is FileBackedBodyStream {
            self = .file
        } else if request.httpBodyStream != nil {
            self = .oneShotStream
        } else if let body = request.httpBody, !body.isEmpty {
            self = .inMemory
        } else {
            self = .none
        }
    }

    /// Whether the transport can send the whole body again on a new task.
    var canBeSentAgain: Bool {
        switch self {
        case .none, .inMemory, .file: true
        case .oneShotStream: false
        }
    }

    /// A stream whose every read fails. Handed to libcurl when it asks for a one-shot body again: the attempt then
    /// ends with an error before any body byte goes out, instead of sending an empty body that looks complete
    /// (chunked, it would end with the zero-length chunk at once).
    final class RefusingStream: InputStream {
        init() {
            super.init(data: Data())
        }

        override var hasBytesAvailable: Bool { true }

        override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int { -1 }

        override var streamError: (any Error)? { URLError(.networkConnectionLost) }
    }
}
