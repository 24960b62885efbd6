import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `HTTPURLResponse`s a plugin built for its latest answers from the store, reused when an answer has exactly
/// the same inputs: URL, status code and header fields (the stored fields, with the `Age` in whole seconds and the
/// status header already set, so a different age second, status or cache status is a different answer).
///
/// Building an `HTTPURLResponse` costs more than the rest of a hit together (Foundation canonicalises every field
/// name). An `HTTPURLResponse` is immutable, so two answers with equal inputs may share one object (`===`): nothing
/// a caller can read from it differs. Only the response object is shared; every request still runs its own key,
/// `Vary`, credential and freshness checks at its own time, and the body comes from the entry it was answered
/// with. At most ``capacity`` responses are kept; when full, the memo starts over.
final class HitMemo: Sendable {
    /// The most responses kept.
    static let capacity = 64

    /// Everything `HTTPURLResponse.init(url:statusCode:httpVersion:headerFields:)` is given for an answer (the
    /// HTTP version is always `HTTP/1.1`, which Foundation does not keep anyway).
    struct Inputs: Hashable {
        let url: URL
        let statusCode: Int
        let headers: [String: String]
    }

    /// A response with the inputs it was built from. `@unchecked Sendable`: `HTTPURLResponse` has no setters (every
    /// property is fixed at init), so the object is only ever read after it was built.
    private struct Built: @unchecked Sendable {
        let response: HTTPURLResponse
    }

    private let built = Locked([Inputs: Built]())

    /// The response for `inputs`: the one built earlier for equal inputs, else a new one (kept for later), or `nil`
    /// if Foundation refuses to build it.
    func response(for inputs: Inputs) -> HTTPURLResponse? {
        if let reused = built.withLock({ $0[inputs] }) { return reused.response }
        guard
            let response = HTTPURLResponse(
                url: inputs.url,
                statusCode: inputs.statusCode,
                httpVersion: "HTTP/1.1",
                headerFields: inputs.headers
            )
        else { return nil }
        built.withLock { memo in
            if memo.count >= Self.capacity { memo.removeAll(keepingCapacity: true) }
            memo[inputs] = Built(response: response)
        }
        return response
    }

    /// How many responses are kept (for tests).
    var count: Int { built.withLock { $0.count } }
}
