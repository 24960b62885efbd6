import Foundation
public import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport that answers from canned responses, for unit tests of endpoints and plugins.
///
/// Responses are matched by method and URL (or by an endpoint, whose request is built to find them) or by a
/// predicate; a stub with several responses answers them in turn and then repeats the last. Every request is
/// recorded. Thread-safe.
///
/// ```swift
/// let stub = StubTransport()
/// stub.stub(Api.posts, with: .json(Data("[]".utf8)))
/// let provider = NetworkAgentProvider<Api>(agent: NetworkAgent(transport: stub))
/// ```
public final class StubTransport: HTTPTransport {
    /// One canned answer.
    public struct Response: Sendable {
        /// The status code.
        public var statusCode: Int
        /// The response headers.
        public var headers: [String: String]
        /// The body.
        public var body: Data
        /// How long to wait before answering; cancellation ends the wait with
        /// ``/NetworkAgent/NetworkAgentError/Code/cancelled``.
        public var delay: Duration
        /// An error to throw instead of answering.
        public var error: NetworkAgentError?

        /// Creates a canned answer.
        ///
        /// - Parameters:
        ///   - statusCode: The status code; defaults to 200.
        ///   - headers: The response headers.
        ///   - body: The body.
        ///   - delay: A wait before answering.
        public init(
            statusCode: Int = 200,
            headers: [String: String] = [:],
            body: Data = Data(),
            delay: Duration = .zero
        ) {
            self.statusCode = statusCode
            self.headers = headers
            self.body = body
            self.delay = delay
        }

        /// A JSON answer.
        ///
        /// - Parameters:
        ///   - body: The JSON bytes.
        ///   - statusCode: The status code; defaults to 200.
        /// - Returns: A response with `Content-Type: application/json`.
        public static func json(_ body: Data, statusCode: Int = 200) -> Response {
            Response(statusCode: statusCode, headers: ["Content-Type": "application/json"], body: body)
        }

        /// An answer with a status code and no body.
        ///
        /// - Parameter statusCode: The status code.
        /// - Returns: The response.
        public static func status(_ statusCode: Int) -> Response {
            Response(statusCode: statusCode)
        }

        /// A failure instead of an answer.
        ///
        /// - Parameter error: The error to throw.
        /// - Returns: The response.
        public static func failure(_ error: NetworkAgentError) -> Response {
            var response = Response()
            response.error = error
            return response
        }

        /// A failure like a refused connection.
        public static var connectionRefused: Response {
            .failure(
                NetworkAgentError(.transport, "stubbed refused connection", underlying: URLError(.cannotConnectToHost))
            )
        }

        /// An answer that never comes: the request waits until its task is cancelled.
        public static var never: Response {
            Response(delay: .seconds(365 * 86_400))
        }

        /// This response, answered after `delay`.
        ///
        /// - Parameter delay: The wait.
        /// - Returns: The delayed response.
        public func delayed(by delay: Duration) -> Response {
            var response = self
            response.delay = delay
            return response
        }
    }

    private struct Rule {
        let matches: @Sendable (URLRequest) -> Bool
        var responses: [Response]
    }

    private struct State {
        var rules: [Rule] = []
        var requests: [URLRequest] = []
    }

    private let state = Locked(State())
    private let fallback: Response

    /// Creates a stub transport.
    ///
    /// - Parameter fallback: The answer to requests no stub matches; defaults to a 404.
    public init(fallback: Response = .status(404)) {
        self.fallback = fallback
    }

    /// Answers requests that satisfy a predicate. Later stubs take precedence over earlier ones.
    ///
    /// - Parameters:
    ///   - matches: Whether a request is answered by this stub.
    ///   - responses: The answers, in turn; the last repeats.
    public func stub(matching matches: @escaping @Sendable (URLRequest) -> Bool, with responses: [Response]) {
        state.withLock { $0.rules.insert(Rule(matches: matches, responses: responses), at: 0) }
    }

    /// Answers requests with a given method and URL (query included).
    ///
    /// - Parameters:
    ///   - url: The URL to match.
    ///   - method: The method to match; `nil` matches any.
    ///   - responses: The answers, in turn; the last repeats.
    public func stub(url: URL, method: HTTPMethod? = nil, with responses: Response...) {
        stub(matching: { $0.url == url && (method == nil || $0.httpMethod == method?.name) }, with: responses)
    }

    /// Answers requests for an endpoint: the method and URL its request is built with.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint to match.
    ///   - responses: The answers, in turn; the last repeats.
    public func stub(_ endpoint: any NetworkAgentEndpoint, with responses: Response...) {
        guard let request = try? NetworkAgent(transport: self).urlRequest(for: endpoint) else { return }
        let url = request.url
        let method = request.httpMethod
        stub(matching: { $0.url == url && $0.httpMethod == method }, with: responses)
    }

    /// Every request sent so far, in order.
    public var requests: [URLRequest] { state.withLock { $0.requests } }

    /// Answers from the first matching stub.
    ///
    /// - Parameter request: The request.
    /// - Returns: The canned body and an `HTTPURLResponse`.
    /// - Throws: The stub's error, or ``/NetworkAgent/NetworkAgentError/Code/cancelled`` when cancelled during a delay.
    public func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        let answer = state.withLock { state -> Response in
            state.requests.append(request)
            guard let index = state.rules.firstIndex(where: { $0.matches(request) }) else { return fallback }
            let responses = state.rules[index].responses
            guard let first = responses.first else { return fallback }
            if responses.count > 1 { state.rules[index].responses.removeFirst() }
            return first
        }
        if answer.delay > .zero {
            do { try await Task.sleep(for: answer.delay) } catch {
                throw NetworkAgentError(.cancelled, "the request was cancelled")
            }
        }
        if let error = answer.error { throw error }
        guard let url = request.url,
            let response = HTTPURLResponse(
                url: url,
                statusCode: answer.statusCode,
                httpVersion: "HTTP/1.1",
                headerFields: answer.headers
            )
        else {
            throw NetworkAgentError(.invalidResponse, "the stub cannot answer a request without URL")
        }
        return (data: answer.body, response: response)
    }
}
