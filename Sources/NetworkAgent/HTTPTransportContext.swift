import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a transport reads from the exchange that calls it, and the rules every transport applies the same way.
///
/// ``URLSessionTransport`` is built on these, and a transport in another module (such as `NetworkAgentCurl`'s) uses
/// them to behave as it does: the same deadline rule, the same redirect policy, the same error codes, so that
/// plugins (retry's classification of failures, metrics, logging) see no difference.
///
/// A transport also removes the sensitive-header mark before it sends a request (set
/// `URLRequest.sensitiveHeaderNames` to `[]` on the copy it sends; the marked headers themselves stay) and follows
/// no redirect itself: it asks ``nextRequest(after:response:)`` for each hop.
public enum HTTPTransportContext {
    /// The response body limit of the exchange calling the transport, in bytes (`nil`: none).
    ///
    /// Set by the agent around each call of its transport, from ``NetworkAgentEndpoint/maximumResponseBytes`` or
    /// ``NetworkAgentConfiguration/maximumResponseBytes``. A transport stops a transfer whose body grows past it and
    /// fails with ``responseTooLarge(limit:request:response:)``; the agent checks buffered bodies again.
    public static var maximumResponseBytes: Int? { NetworkAgent.maximumResponseBytes }

    /// The progress handler of the call the transport serves, or `nil`: report upload and download progress to it.
    public static var progressHandler: TransferProgress.Handler? { TransferProgress.handler }

    /// How long a request may take, from its `timeoutInterval`: `nil` (no deadline) when that is infinite or at
    /// least 10⁹ seconds.
    ///
    /// - Parameter request: The request.
    /// - Returns: The time limit of the whole exchange, redirects included, or `nil` for none.
    /// - Throws: ``NetworkAgentError`` with ``NetworkAgentError/Code/invalidTimeout`` when the interval is negative or
    ///   not a number.
    public static func timeLimit(of request: URLRequest) throws(NetworkAgentError) -> Duration? {
        let interval = request.timeoutInterval
        // `>=` is false for NaN too.
        guard interval >= 0 else {
            throw NetworkAgentError(
                .invalidTimeout,
                "the timeoutInterval \(interval) of \(request.url?.absoluteString ?? "the request") is negative or "
                    + "not a number"
            )
        }
        guard interval < URLSessionTransport.longestTimeout else { return nil }
        return Duration(timeInterval: interval)
    }

    /// The request to send next when `response` redirects: 301/302 turn a `POST` into a `GET` and 303 anything but
    /// `HEAD` into a `GET`; 307/308 keep the method and the body; credentials and the headers the request marks
    /// sensitive are removed when the hop leaves the origin (an `https` to `http` downgrade included).
    ///
    /// The transport counts the hops it follows and fails with ``NetworkAgentError/Code/redirectFailed`` past its
    /// own limit (``URLSessionTransport/defaultMaximumRedirects`` by default).
    ///
    /// - Parameters:
    ///   - request: The request that got `response`.
    ///   - response: The response.
    /// - Returns: The next request, or `nil` when `response` is not a redirect to follow.
    /// - Throws: ``NetworkAgentError`` with ``NetworkAgentError/Code/redirectFailed`` when the `Location` cannot be
    ///   followed (not http or https), or when the hop needs a one-shot body again.
    public static func nextRequest(
        after request: URLRequest,
        response: HTTPURLResponse
    ) throws(NetworkAgentError) -> URLRequest? {
        try RedirectPolicy.nextRequest(after: request, response: response)
    }

    /// Tells the exchange's observers (the metrics plugin among them) that response headers arrived: emits
    /// ``NetworkAgentEvent/Kind/responseHeaders(after:)``. Call it once per hop that received headers, also when the
    /// hop then fails (its body cut short, the deadline, a cancellation), from the calling task: the event goes to the
    /// observers of the exchange that task runs.
    ///
    /// - Parameter duration: The time from starting the hop to its response headers.
    public static func reportResponseHeaders(after duration: Duration) {
        guard NetworkAgentEvents.hasObservers else { return }
        // The `seconds` attribute is formatted only if an observer reads it (a logging sink keeping `debug`).
        NetworkAgentEvents.emit(.responseHeaders(after: duration))
    }

    /// Maps a failure to the ``NetworkAgentError`` that ``URLSessionTransport`` gives for it: a `URLError`
    /// `.cancelled` is ``NetworkAgentError/Code/cancelled``, `.timedOut` is ``NetworkAgentError/Code/timedOut``,
    /// any other `URLError` (or error) is ``NetworkAgentError/Code/transport`` with it as the underlying error, which
    /// is what the retry plugin classifies. A ``NetworkAgentError`` is returned as it is.
    ///
    /// - Parameters:
    ///   - error: The failure, best a `URLError` with the code URLSession would give.
    ///   - request: The request that failed, for the message.
    /// - Returns: The error to throw.
    public static func error(for error: any Error, request: URLRequest?) -> NetworkAgentError {
        if let error = error as? NetworkAgentError { return error }
        let target = request?.url?.absoluteString ?? "the server"
        guard let urlError = error as? URLError else {
            return NetworkAgentError(.transport, "\(target): \(error)", underlying: error)
        }
        switch urlError.code {
        case .cancelled:
            return NetworkAgentError(.cancelled, "the request was cancelled", underlying: urlError)
        case .timedOut:
            return NetworkAgentError(.timedOut, "\(target) timed out", underlying: urlError)
        default:
            return NetworkAgentError(
                .transport,
                "\(target): \(urlError.localizedDescription) (URLError \(urlError.code.rawValue))",
                underlying: urlError
            )
        }
    }

    /// The error of a request that ran out of time (its ``timeLimit(of:)``).
    ///
    /// - Parameter request: The request, for the message.
    /// - Returns: A ``NetworkAgentError`` with ``NetworkAgentError/Code/timedOut``.
    public static func timedOut(_ request: URLRequest?) -> NetworkAgentError {
        let timeout = request.map { " within \($0.timeoutInterval) s" } ?? ""
        return NetworkAgentError(
            .timedOut,
            "no response\(timeout) from \(request?.url?.absoluteString ?? "the server")"
        )
    }

    /// The error of a transfer stopped because its body grew past ``maximumResponseBytes``.
    ///
    /// - Parameters:
    ///   - limit: The limit, in bytes.
    ///   - request: The request, for the message.
    ///   - response: The response whose body was too large, when its head arrived.
    /// - Returns: A ``NetworkAgentError`` with ``NetworkAgentError/Code/responseTooLarge``.
    public static func responseTooLarge(
        limit: Int,
        request: URLRequest?,
        response: HTTPURLResponse?
    ) -> NetworkAgentError {
        NetworkAgentError(
            .responseTooLarge,
            "the response body of \((request?.url ?? response?.url)?.absoluteString ?? "the server") grew past the "
                + "limit of \(limit) bytes; the transfer was stopped",
            response: response
        )
    }
}
