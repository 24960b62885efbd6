/// Polls a condition every 5 ms until it holds or `limit` passes: for waiting on another party (a server seeing a
/// connection close, a background refresh), never for timing. The generous default only matters when a loaded machine
/// is slow; a condition that holds returns at once.
///
/// - Parameters:
///   - limit: How long to wait at most.
///   - condition: What to wait for.
/// - Returns: Whether the condition held in time.
public func eventually(within limit: Duration = .seconds(15), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
