import Foundation
import NetworkAgent
import NetworkAgentRetry
import NetworkAgentTesting
import NetworkAgentToolSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An endpoint pointed at a test server or stub.
struct RetryEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path = "/"
    var method = HTTPMethod.get
    var headers: [String: String] = ["Content-Type": "application/json", "Accept": "application/json"]
    var task = HTTPTask.requestPlain
    var timeout: Duration?

    static let stubbed = RetryEndpoint(baseURL: URL(string: "http://stub.invalid")!)
}

/// A reproducible source of values in `0...1` (SplitMix64).
final class SeededRandom: Sendable {
    private let generator: Locked<SplitMix64>

    init(seed: UInt64) {
        generator = Locked(SplitMix64(seed: seed))
    }

    func unit() -> Double {
        let bits = generator.withLock { $0.next() }
        return Double(bits >> 11) / Double(1 << 53)
    }
}

/// An inner plugin that counts attempts and makes each one take `duration` of virtual time.
final class AttemptCounter: NetworkAgentPlugin {
    let clock: ManualClock?
    let duration: Duration
    private let count = Locked(0)

    init(clock: ManualClock? = nil, duration: Duration = .zero) {
        self.clock = clock
        self.duration = duration
    }

    var attempts: Int { count.withLock { $0 } }

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        count.withLock { $0 += 1 }
        clock?.advance(by: duration)
        return try await next(request)
    }
}
