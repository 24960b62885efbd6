/// Something a plugin did that other plugins may observe: a retry scheduled, a token refreshed, a cache hit.
///
/// Plugins emit events with ``NetworkAgentEvents/emit(_:)``; observers such as a metrics or logging plugin receive
/// the events emitted inside the calls they wrap, without the plugins knowing each other.
public struct NetworkAgentEvent: Sendable, Hashable, CustomStringConvertible {
    /// The emitting plugin, a stable lowercase name such as `retry`, `token_refresh` or `cache`.
    public var source: String
    /// What happened, a stable lowercase name such as `retry_scheduled` or `hit`.
    public var name: String
    /// Details, e.g. `attempt`, `delay_ms` or `reason`. Never credentials.
    public var attributes: [String: String]

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - source: The emitting plugin's stable name.
    ///   - name: What happened.
    ///   - attributes: Details; never credentials.
    public init(source: String, name: String, attributes: [String: String] = [:]) {
        self.source = source
        self.name = name
        self.attributes = attributes
    }

    /// `source.name key=value …`, attributes sorted by key.
    public var description: String {
        ([source + "." + name] + attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
            .joined(separator: " ")
    }
}

/// The observers of ``NetworkAgentEvent``s for the current task and the tasks it creates.
///
/// ```swift
/// func intercept(_ request: URLRequest, endpoint: any NetworkAgentEndpoint, next: NetworkAgentExchange)
///     async throws -> (data: Data, response: URLResponse)
/// {
///     try await NetworkAgentEvents.observing({ event in counter.add(event) }) { try await next(request) }
/// }
/// ```
public enum NetworkAgentEvents {
    /// Receives an event. Called synchronously on the emitting task: keep it short and thread-safe.
    public typealias Observer = @Sendable (NetworkAgentEvent) -> Void

    @TaskLocal private static var observers: [Observer] = []

    /// Delivers an event to every observer installed around the current task.
    ///
    /// - Parameter event: The event.
    public static func emit(_ event: NetworkAgentEvent) {
        for observer in observers { observer(event) }
    }

    /// Whether any observer would receive an emitted event; lets a plugin skip building one.
    public static var hasObservers: Bool { !observers.isEmpty }

    /// Runs `operation` with `observer` receiving the events emitted inside it (and in tasks it creates,
    /// detached tasks excepted), as well as any observers installed further out.
    ///
    /// - Parameters:
    ///   - observer: Receives each event.
    ///   - operation: The work to observe.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws.
    public static func observing<Result>(
        _ observer: @escaping Observer,
        operation: () async throws -> Result
    ) async rethrows -> Result {
        try await $observers.withValue(observers + [observer], operation: operation)
    }
}
