/// Something a plugin did that other plugins may observe: a retry scheduled, a token refreshed, a cache hit.
///
/// Plugins emit events with ``NetworkAgentEvents/emit(_:)``; observers such as a metrics or logging plugin receive
/// the events emitted inside the calls they wrap, without the plugins knowing each other.
///
/// An event has two faces. Its ``kind`` is the typed value a consumer switches over: the events another plugin
/// acts on (time to headers, a retry, a token refresh, a cache lookup) each have a case with typed values, so no
/// observer parses a name or an attribute string. Every other event is ``Kind/other(source:name:)``. Its
/// ``source``, ``name`` and ``attributes`` describe it for people (logs); they are derived from the kind, so the
/// two never disagree.
///
/// ```swift
/// let retry = NetworkAgentEvent(.retryScheduled(delay: .milliseconds(200)), attributes: ["attempt": "1"])
/// let custom = NetworkAgentEvent(source: "my_plugin", name: "warmed_up")
/// switch retry.kind {
/// case .retryScheduled(let delay): print("retrying in \(delay), logged as \(retry)")  // retry.retry_scheduled attempt=1
/// default: print(custom)  // my_plugin.warmed_up
/// }
/// ```
public struct NetworkAgentEvent: Sendable, Equatable, CustomStringConvertible {
    /// What happened, as a value an observer switches over.
    ///
    /// The cases other than ``other(source:name:)`` are the events the bundled plugins emit and the metrics plugin
    /// counts; they live in the core so that emitter and observer share one type without depending on each other.
    public enum Kind: Sendable, Equatable {
        /// The transport received response headers this long after it started sending (`transport.response_headers`).
        case responseHeaders(after: Duration)
        /// A retry plugin scheduled another attempt after this backoff (`retry.retry_scheduled`).
        case retryScheduled(delay: Duration)
        /// A token refresh finished (`token_refresh.refresh_succeeded` or `token_refresh.refresh_failed`).
        case tokenRefresh(succeeded: Bool)
        /// A cache served a fresh stored response (`cache.hit`).
        case cacheHit
        /// A cache lookup found nothing it could serve: the request went to the server (`cache.miss`).
        case cacheMiss
        /// A cache served a stored response after the server confirmed it with `304 Not Modified`
        /// (`cache.revalidated`).
        case cacheRevalidated
        /// A cache served a stored response past its freshness, as the request or the response allowed
        /// (`cache.stale`).
        case cacheStale
        /// A circuit breaker moved the circuit of `key` (an origin, a route) from one state to another
        /// (`circuit_breaker.state_changed`).
        case circuitStateChanged(key: String, from: CircuitState, to: CircuitState)
        /// Any other event, known to people by its stable lowercase source and name.
        case other(source: String, name: String)

        /// The emitting plugin's stable lowercase name, such as `retry`, `token_refresh` or `cache`.
        package var source: String {
            switch self {
            case .responseHeaders: "transport"
            case .retryScheduled: "retry"
            case .tokenRefresh: "token_refresh"
            case .cacheHit, .cacheMiss, .cacheRevalidated, .cacheStale: "cache"
            case .circuitStateChanged: "circuit_breaker"
            case .other(let source, _): source
            }
        }

        /// What happened, a stable lowercase name such as `retry_scheduled` or `hit`.
        package var name: String {
            switch self {
            case .responseHeaders: "response_headers"
            case .retryScheduled: "retry_scheduled"
            case .tokenRefresh(let succeeded): succeeded ? "refresh_succeeded" : "refresh_failed"
            case .cacheHit: "hit"
            case .cacheMiss: "miss"
            case .cacheRevalidated: "revalidated"
            case .cacheStale: "stale"
            case .circuitStateChanged: "state_changed"
            case .other(_, let name): name
            }
        }
    }

    /// The state of a circuit breaker's circuit, as carried by ``Kind/circuitStateChanged(key:from:to:)``.
    public enum CircuitState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Calls go through; their outcomes are counted.
        case closed
        /// Calls fail fast without reaching the server, until the open interval ends.
        case open
        /// A bounded number of probe calls go through; their outcomes close or re-open the circuit.
        case halfOpen = "half_open"

        /// The stable lowercase name: `closed`, `open` or `half_open`.
        public var description: String { rawValue }
    }

    /// What happened, as a typed value.
    public var kind: Kind {
        didSet {
            // The attributes stay those of the time to headers the event was made with.
            if case .secondsOfKind = details, case .responseHeaders(let duration) = oldValue {
                details = .given(Self.secondsAttributes(duration))
            }
        }
    }
    /// Details for people, e.g. `attempt`, `delay_ms` or `reason`. Never credentials.
    public var attributes: [String: String] {
        get {
            switch details {
            case .given(let attributes): attributes
            case .secondsOfKind:
                if case .responseHeaders(let duration) = kind { Self.secondsAttributes(duration) } else { [:] }
            }
        }
        set { details = .given(newValue) }
    }

    /// What ``attributes`` reads: given ones, or the time to headers of ``kind``, formatted only when someone reads it.
    ///
    /// The transport reports every exchange's time to headers; most observers (the metrics plugin) read its typed
    /// ``kind`` only, and formatting a `Double` into a dictionary per request for nobody cost an allocation. The
    /// duration is read from ``kind`` rather than held again, so that the event is no larger than a kind and a
    /// dictionary (a larger event made async frames that hold one larger, and the full chain allocate more).
    private enum Details: Sendable {
        case given([String: String])
        /// `["seconds": "<the duration of kind in seconds>"]`, formatted when read.
        case secondsOfKind
    }

    private var details: Details

    /// The emitting plugin's stable name, from ``kind``.
    public var source: String { kind.source }
    /// What happened, a stable lowercase name, from ``kind``.
    public var name: String { kind.name }

    /// Creates an event of a typed kind.
    ///
    /// - Parameters:
    ///   - kind: What happened.
    ///   - attributes: Details for people; never credentials.
    public init(_ kind: Kind, attributes: [String: String] = [:]) {
        self.kind = kind
        self.details = .given(attributes)
    }

    /// The ``Kind/responseHeaders(after:)`` event with its `seconds` attribute, formatted only when read: the same
    /// event as `NetworkAgentEvent(.responseHeaders(after: duration), attributes: ["seconds": "\(seconds)"])`.
    ///
    /// - Parameter duration: The time from starting the hop to its response headers.
    /// - Returns: The event.
    package static func responseHeaders(after duration: Duration) -> NetworkAgentEvent {
        var event = NetworkAgentEvent(.responseHeaders(after: duration))
        event.details = .secondsOfKind
        return event
    }

    /// The attributes of a ``Kind/responseHeaders(after:)`` event: its duration in seconds, as `Double` prints it.
    private static func secondsAttributes(_ duration: Duration) -> [String: String] {
        ["seconds": "\(duration.timeInterval)"]
    }

    /// Events are equal when their kinds and their attributes are, however the attributes are held.
    ///
    /// - Parameters:
    ///   - lhs: An event.
    ///   - rhs: Another event.
    /// - Returns: Whether they are equal.
    public static func == (lhs: NetworkAgentEvent, rhs: NetworkAgentEvent) -> Bool {
        lhs.kind == rhs.kind && lhs.attributes == rhs.attributes
    }

    /// Creates an event of kind ``Kind/other(source:name:)``, which observers know only by its source and name.
    ///
    /// - Parameters:
    ///   - source: The emitting plugin's stable name.
    ///   - name: What happened.
    ///   - attributes: Details; never credentials.
    public init(source: String, name: String, attributes: [String: String] = [:]) {
        self.init(.other(source: source, name: name), attributes: attributes)
    }

    /// `source.name key=value …`, attributes sorted by key.
    public var description: String {
        // Built in one string (the logging plugin describes every event it logs): no arrays in between.
        let text = source + "." + name
        let shown = attributes
        if shown.count == 1, let only = shown.first { return text + " " + only.key + "=" + only.value }
        return shown.sorted { $0.key < $1.key }.reduce(into: text) { text, attribute in
            text += " " + attribute.key + "=" + attribute.value
        }
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

    /// The observers installed around the current task: the innermost one, and the chain of those installed
    /// further out behind a reference. Not an array: installing the first observer allocates nothing (an array
    /// allocated its storage at every installation), and emitting to one observer walks no array.
    ///
    /// A struct, not an optional class or closure: on Swift 6.3.1 a `@TaskLocal` of an optional `@Sendable` closure
    /// crashes optimised builds when bound with `withValue` (see `TransferProgress`); a struct does not.
    struct Chain: Sendable {
        /// The observer installed last, or `nil` when none is.
        var innermost: Observer?
        /// The observers installed before `innermost`, further out; `nil` when `innermost` is the only one.
        var outer: Outer?

        /// The chain with `observer` installed inside this one.
        func adding(_ observer: @escaping Observer) -> Chain {
            Chain(innermost: observer, outer: innermost == nil ? nil : Outer(self))
        }

        /// Delivers `event` to every observer of the chain, outermost first.
        func deliver(_ event: NetworkAgentEvent) {
            outer?.chain.deliver(event)
            innermost?(event)
        }
    }

    /// A chain of observers held by reference: the outer part of a ``Chain``.
    final class Outer: Sendable {
        let chain: Chain

        init(_ chain: Chain) {
            self.chain = chain
        }
    }

    @TaskLocal private static var observers = Chain()

    /// Delivers an event to every observer installed around the current task, outermost first.
    ///
    /// - Parameter event: The event.
    public static func emit(_ event: NetworkAgentEvent) {
        observers.deliver(event)
    }

    /// Whether any observer would receive an emitted event; lets the bundled plugins skip building one.
    package static var hasObservers: Bool { observers.innermost != nil }

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
        try await $observers.withValue(observers.adding(observer), operation: operation)
    }
}
