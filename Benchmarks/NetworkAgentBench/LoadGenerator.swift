import NetworkAgent

/// Sends a fixed number of requests from a fixed number of concurrent workers and reports the rate.
enum LoadGenerator {
    /// Hands out request numbers to the workers.
    private final class Counter: Sendable {
        private let next = Locked(0)

        /// Claims the next request number.
        func claim() -> Int {
            next.withLock { next in
                defer { next += 1 }
                return next
            }
        }
    }

    /// Runs `total` calls of `request` from `concurrency` tasks and returns the calls per second.
    ///
    /// - Parameters:
    ///   - total: The number of requests.
    ///   - concurrency: The number of requests in flight at once.
    ///   - request: One request, checked; throws when the answer is wrong.
    /// - Returns: Requests per second over the whole batch.
    /// - Throws: The first error a request throws (the others are cancelled).
    static func requestsPerSecond(
        total: Int,
        concurrency: Int,
        _ request: @escaping @Sendable () async throws -> Void
    ) async throws -> Double {
        let counter = Counter()
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while counter.claim() < total {
                        try await request()
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = start.duration(to: clock.now).seconds
        return Double(total) / seconds
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { timeInterval }
}
