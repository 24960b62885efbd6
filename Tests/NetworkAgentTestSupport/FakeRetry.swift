import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plugin that retries a 503 as a retry plugin would, emitting `retry.retry_scheduled` (with `attempt`) before each
/// new attempt, without waiting: for observers of retries (logging, metrics) that must not depend on the retry plugin.
public struct FakeRetry: NetworkAgentPlugin {
    /// The most attempts, the first included.
    public var attempts: Int

    /// Creates the plugin.
    ///
    /// - Parameter attempts: The most attempts, the first included.
    public init(attempts: Int = 3) {
        self.attempts = attempts
    }

    /// Sends the request until the status is not 503 or ``attempts`` are spent.
    public func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        var attempt = 1
        while true {
            let result = try await next(request)
            guard (result.response as? HTTPURLResponse)?.statusCode == 503, attempt < attempts else { return result }
            NetworkAgentEvents.emit(
                NetworkAgentEvent(.retryScheduled(delay: .zero), attributes: ["attempt": "\(attempt)"])
            )
            attempt += 1
        }
    }
}
