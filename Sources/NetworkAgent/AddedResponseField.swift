import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A header field an interceptor asks the transport to put on the final response of the exchange it runs, so that
/// it need not build a second `HTTPURLResponse` to add it (the disk cache's status field on a plain miss: building
/// an `HTTPURLResponse` costs about as much CPU as libcurl's part of a small request).
///
/// It travels in task-locals, never in the request: it cannot reach the wire, a log or the request the plugins'
/// `onResponse` see. The interceptor binds it for one call of its `next`
/// (``NetworkAgentExchange/callAsFunction(_:addingResponseField:)``); the end of that same exchange (the call of
/// the transport, after every inner interceptor) hands it to the transport
/// (``HTTPTransportContext/addedResponseField``), and nothing else sees it: not a side request an inner interceptor
/// makes, not another provider's call made inside one. A transport that builds its response from parsed fields
/// (`CurlTransport`) sets the field on the final response, as `fields[name] = value` on the merged fields; another
/// ignores it. So the interceptor checks what came back and adds the field itself when it is not there.
package struct AddedResponseField: Sendable {
    /// The field's name, set as given (Foundation keeps an `X-` name's spelling).
    package let name: String
    package let value: String
    /// The responses a transport built with the field, so that the asker can tell its own answer from one an inner
    /// plugin made, without copying the fields out of Foundation to look.
    package let receipt = Receipt()

    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// The responses built with the field, held (not only identified) so that a response that went away cannot
    /// pass for a new one at the same address.
    package final class Receipt: Sendable {
        private let built = Locked<[HTTPURLResponse]>([])

        /// Called by the transport for each response it built with the field on it.
        package func record(_ response: HTTPURLResponse) {
            built.withLock { $0.append(response) }
        }

        /// Whether `response` is one the transport built with the field.
        package func contains(_ response: HTTPURLResponse) -> Bool {
            built.withLock { $0.contains { $0 === response } }
        }
    }

    /// What an interceptor asked for, with the call whose exchange it was asked in.
    struct Request: Sendable {
        let field: AddedResponseField
        let call: CallState
    }

    /// Bound by ``NetworkAgentExchange/callAsFunction(_:addingResponseField:)`` around the rest of the exchange.
    @TaskLocal static var requested: Request?

    /// Bound by the end of the exchange around the transport's call only.
    @TaskLocal static var forTransport: AddedResponseField?
}

extension HTTPTransportContext {
    /// The header field the exchange calling the transport asks it to set on the final response (not on a redirect
    /// it follows), or `nil`; see ``AddedResponseField``. Read it in the calling task.
    package static var addedResponseField: AddedResponseField? { AddedResponseField.forTransport }

    /// Whether a response with this status may be a redirect that ``nextRequest(after:response:)`` follows.
    package static func mayRedirect(status: Int) -> Bool { RedirectPolicy.followedStatusCodes.contains(status) }
}

extension NetworkAgentExchange {
    /// Runs the rest of the exchange, asking the transport to set `field` on the final response it builds.
    ///
    /// The transport may not do it (``URLSessionTransport`` does not), and an inner interceptor may answer with a
    /// response of its own: check the response and add the field where it is missing.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - field: The field to set on the response.
    /// - Returns: What ``callAsFunction(_:)`` returns.
    package func callAsFunction(
        _ request: URLRequest,
        addingResponseField field: AddedResponseField
    ) async throws -> (data: Data, response: URLResponse) {
        try await AddedResponseField.$requested.withValue(AddedResponseField.Request(field: field, call: call)) {
            try await self(request)
        }
    }

    /// Runs the transport's call `body` with the field asked for in this exchange, if one was.
    func withAddedResponseField<T>(_ body: () async throws -> T) async throws -> T {
        guard let requested = AddedResponseField.requested, requested.call.isSame(as: call) else {
            return try await body()
        }
        return try await AddedResponseField.$forTransport.withValue(requested.field) { try await body() }
    }
}

extension HTTPURLResponse {
    /// Whether this is an `HTTPURLResponse` as the library builds them (Foundation's class, or the one that carries
    /// `transferTimings`), not a subclass of a custom transport: then a response rebuilt from its URL, status, fields
    /// and timings is the same response.
    package var isRebuildable: Bool {
        let kind = type(of: self)
        return kind == HTTPURLResponse.self || kind == TimedHTTPURLResponse.self
    }
}
