import Foundation
public import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RetryPlugin {
    /// Why an attempt failed in a way the policy retries.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// The server answered with a retryable status code.
        case status(Int)
        /// The exchange failed on the network with this `URLError` code.
        case transport(URLError.Code)
        /// The attempt missed its deadline (``/NetworkAgent/NetworkAgentError/Code/timedOut``).
        case timedOut

        /// A short, stable name safe as a metrics label: `status_503`, `transport_cannot_connect_to_host`,
        /// `timed_out`.
        public var description: String {
            switch self {
            case .status(let code): "status_\(code)"
            case .transport(let code): "transport_" + Self.name(of: code)
            case .timedOut: "timed_out"
            }
        }

        private static func name(of code: URLError.Code) -> String {
            switch code {
            case .timedOut: "timed_out"
            case .cannotFindHost: "cannot_find_host"
            case .cannotConnectToHost: "cannot_connect_to_host"
            case .networkConnectionLost: "network_connection_lost"
            case .dnsLookupFailed: "dns_lookup_failed"
            case .notConnectedToInternet: "not_connected_to_internet"
            case .badServerResponse: "bad_server_response"
            default: "url_error_\(-code.rawValue)"
            }
        }
    }

    /// An attempt that failed in a way the policy would retry, as handed to the `shouldRetry` predicate.
    public struct FailedAttempt: Sendable {
        /// The attempt's number: 1 for the first attempt.
        public let number: Int
        /// The request that was sent.
        public let request: URLRequest
        /// Why the attempt failed.
        public let reason: Reason
        /// The server's response, for a ``Reason/status(_:)`` failure.
        public let response: HTTPURLResponse?
        /// The response body, for a ``Reason/status(_:)`` failure.
        public let data: Data?
        /// The error, for a ``Reason/transport(_:)`` or ``Reason/timedOut`` failure.
        public let error: NetworkAgentError?

        /// Creates a failed attempt, e.g. to test a `shouldRetry` predicate.
        ///
        /// - Parameters:
        ///   - number: The attempt's number, from 1.
        ///   - request: The request that was sent.
        ///   - reason: Why the attempt failed.
        ///   - response: The server's response, if any.
        ///   - data: The response body, if any.
        ///   - error: The error, if any.
        public init(
            number: Int,
            request: URLRequest,
            reason: Reason,
            response: HTTPURLResponse? = nil,
            data: Data? = nil,
            error: NetworkAgentError? = nil
        ) {
            self.number = number
            self.request = request
            self.reason = reason
            self.response = response
            self.data = data
            self.error = error
        }
    }
}
