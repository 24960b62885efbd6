public import NetworkAgent

/// Records the ``/NetworkAgent/NetworkAgentEvent``s that plugins emit, for assertions in tests.
///
/// Wrap the calls to observe in ``observing(_:)``: every event emitted inside them, in tasks they create too
/// (detached tasks excepted), is recorded in the order it was emitted. Recording adds to the observers already
/// installed around the call, so a logging or metrics plugin still sees the events. One recorder can observe
/// several calls, in turn or concurrently; ``clear()`` forgets what it holds. Thread-safe.
///
/// ```swift
/// let recorder = EventRecorder()
///
/// _ = try await recorder.observing { try await provider.request(endpoint: .posts) }
///
/// #expect(recorder.names(from: "retry").isEmpty)
/// #expect(recorder.count(from: "cache", named: "hit") == 0)
/// ```
/// ```
public final class EventRecorder: Sendable {
    private let storage = Locked<[NetworkAgentEvent]>([])

    /// Creates a recorder that holds no events.
    public init() {}

    /// Every event recorded, in the order they were emitted.
    public var events: [NetworkAgentEvent] { storage.withLock { $0 } }

    /// The recorded events from one source, with one name, or both.
    ///
    /// - Parameters:
    ///   - source: The emitting plugin's name, such as `retry` or `cache`; `nil` for any source.
    ///   - name: What happened, such as `retry_scheduled`; `nil` for any name.
    /// - Returns: The matching events, in the order they were emitted.
    public func events(from source: String? = nil, named name: String? = nil) -> [NetworkAgentEvent] {
        events.filter { event in
            (source == nil || event.source == source) && (name == nil || event.name == name)
        }
    }

    /// The names of the recorded events, optionally from one source only.
    ///
    /// - Parameter source: The emitting plugin's name; `nil` for every source.
    /// - Returns: The names, such as `["miss", "stored"]`, in the order the events were emitted.
    public func names(from source: String? = nil) -> [String] {
        events(from: source).map(\.name)
    }

    /// How many recorded events match.
    ///
    /// - Parameters:
    ///   - source: The emitting plugin's name; `nil` for any source.
    ///   - name: What happened; `nil` for any name.
    /// - Returns: The number of matching events.
    public func count(from source: String? = nil, named name: String? = nil) -> Int {
        events(from: source, named: name).count
    }

    /// Forgets every recorded event.
    public func clear() {
        storage.withLock { $0.removeAll() }
    }

    /// Records one event, as the observer installed by ``observing(_:)`` does.
    ///
    /// - Parameter event: The event.
    public func record(_ event: NetworkAgentEvent) {
        storage.withLock { $0.append(event) }
    }

    /// An observer that records every event it receives, for `NetworkAgentEvents.observing(_:operation:)` where
    /// ``observing(_:)`` does not fit.
    public var observer: NetworkAgentEvents.Observer {
        { [self] event in record(event) }
    }

    /// Runs `operation`, recording the events emitted inside it.
    ///
    /// - Parameter operation: The calls to observe.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws.
    public func observing<Result>(_ operation: () async throws -> Result) async rethrows -> Result {
        try await NetworkAgentEvents.observing(observer, operation: operation)
    }
}
