/// Runs `operation` and says how long it took, on the continuous clock.
///
/// - Parameter operation: What to time.
/// - Returns: Its result and its duration.
/// - Throws: What `operation` throws.
public func timed<T>(_ operation: () async throws -> T) async rethrows -> (T, Duration) {
    let clock = ContinuousClock()
    let start = clock.now
    let value = try await operation()
    return (value, clock.now - start)
}
