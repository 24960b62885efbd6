public import NetworkAgent

#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

extension CircuitBreakerPlugin {
    /// The default failure rate that opens a circuit: 50 % of the calls in the window (resilience4j's
    /// `failureRateThreshold`).
    public static let defaultFailureRateThreshold = 0.5

    /// The default slow-call rate that opens a circuit: 100 %, every call in the window slow (resilience4j's
    /// `slowCallRateThreshold`).
    public static let defaultSlowCallRateThreshold = 1.0

    /// The default duration from which a call counts as slow: 60 s (resilience4j's `slowCallDurationThreshold`).
    public static let defaultSlowCallDuration: Duration = .seconds(60)

    /// The default window: the last 100 calls (resilience4j's `slidingWindowType` `COUNT_BASED`,
    /// `slidingWindowSize` 100).
    public static let defaultWindow = Window.count(100)

    /// The default least number of calls in the window before a rate can open the circuit: 100 (resilience4j's
    /// `minimumNumberOfCalls`).
    public static let defaultMinimumCalls = 100

    /// The default time an open circuit fails fast before it lets probes through: 60 s (resilience4j's
    /// `waitDurationInOpenState`).
    public static let defaultOpenInterval: Duration = .seconds(60)

    /// The default jitter of the open interval: up to 10 % longer, so that clients whose circuits opened together
    /// do not probe together.
    public static let defaultOpenIntervalJitter = 0.1

    /// The default number of probe calls a half-open circuit lets through: 10 (resilience4j's
    /// `permittedNumberOfCallsInHalfOpenState`).
    public static let defaultProbeCalls = 10

    /// The window a closed circuit measures its failure and slow-call rates over.
    public enum Window: Sendable, Hashable {
        /// The last `n` calls (at least 1).
        case count(Int)
        /// The calls of the last `duration` of the plugin's clock; it slides in steps of a twentieth of its length.
        case time(Duration)
    }

    /// How a call's outcome counts towards opening a circuit.
    public enum Classification: Sendable, Hashable {
        /// The origin answered as it should: counts as a call, not as a failure.
        case success
        /// Counts as a failure.
        case failure
        /// Not counted at all (a cancelled call says nothing about the origin).
        case ignored
    }

    /// What a call through the breaker ended with, for ``Configuration/classify``.
    public enum Result: Sendable {
        /// The exchange returned a response (any status).
        case response(HTTPURLResponse)
        /// The exchange threw.
        case error(any Swift.Error)
    }

    /// Which circuit a call belongs to.
    public struct Key: Sendable {
        let make: @Sendable (URLRequest, any NetworkAgentEndpoint) -> String
        /// Whether this is ``origin``, whose circuit the plugin finds from the URL's text without building the key.
        let isOrigin: Bool

        /// A key made by a function of the request and the endpoint, e.g. a route:
        ///
        /// ```swift
        /// import NetworkAgentCircuitBreaker
        ///
        /// let byRoute = CircuitBreakerPlugin.Key { request, endpoint in
        ///     "\(endpoint.method.rawValue) \(endpoint.baseURL.host ?? "")\(endpoint.path)"
        /// }
        /// ```
        ///
        /// Keep the number of keys small: each one holds a circuit for the life of the plugin.
        ///
        /// - Parameter make: Returns the key of a call; called once per call.
        public init(_ make: @escaping @Sendable (URLRequest, any NetworkAgentEndpoint) -> String) {
            self.make = make
            isOrigin = false
        }

        private init(isOrigin: Bool, make: @escaping @Sendable (URLRequest, any NetworkAgentEndpoint) -> String) {
            self.make = make
            self.isOrigin = isOrigin
        }

        /// The default: the request's origin, `scheme://host:port` (the port made explicit), so that every host
        /// has its own circuit and an open one never touches another host.
        public static let origin = Key(isOrigin: true) { request, _ in
            CircuitBreakerPlugin.origin(of: request.url)
        }

        /// One circuit per origin and endpoint path template: the origin, the method and the endpoint's `path`.
        /// Use it when one route of a host fails on its own; for paths with identifiers in them, write a ``Key``
        /// that names the route instead.
        public static let originAndPath = Key { request, endpoint in
            CircuitBreakerPlugin.origin(of: request.url) + " "
                + (request.httpMethod ?? endpoint.method.rawValue).uppercased() + " " + endpoint.path
        }
    }

    /// When a circuit opens, how long it stays open, and what counts as a failure. Every default is a named static
    /// (``defaultFailureRateThreshold``, …) taken from resilience4j's `CircuitBreakerConfig`.
    public struct Configuration: Sendable {
        /// The failure rate (`0...1`) at or above which a closed circuit opens; clamped to `0...1`.
        public var failureRateThreshold: Double
        /// The rate of slow calls (`0...1`) at or above which a closed circuit opens; clamped to `0...1`.
        public var slowCallRateThreshold: Double
        /// A call that takes at least this long counts as slow.
        public var slowCallDuration: Duration
        /// The window the rates are measured over.
        public var window: Window
        /// The least number of calls the window must hold before a rate can open the circuit (at least 1).
        public var minimumCalls: Int
        /// How long an open circuit fails fast before it lets probes through.
        public var openInterval: Duration
        /// Up to how much longer than ``openInterval`` a circuit stays open, as a fraction (`0.1`: up to 10 %), drawn
        /// at random each time it opens; clamped to `0...1`.
        public var openIntervalJitter: Double
        /// How many probe calls a half-open circuit lets through (at least 1); once they all have an outcome, it
        /// closes when their rates are under the thresholds and opens again otherwise.
        public var probeCalls: Int
        /// Which circuit a call belongs to.
        public var key: Key
        /// How an outcome counts; defaults to ``defaultClassification(_:)``.
        public var classify: @Sendable (Result) -> Classification

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - failureRateThreshold: The failure rate that opens a circuit; defaults to 0.5.
        ///   - slowCallRateThreshold: The slow-call rate that opens a circuit; defaults to 1.0.
        ///   - slowCallDuration: When a call is slow; defaults to 60 s.
        ///   - window: The window of the rates; defaults to the last 100 calls.
        ///   - minimumCalls: The calls needed before a rate counts; defaults to 100.
        ///   - openInterval: How long a circuit stays open; defaults to 60 s.
        ///   - openIntervalJitter: The jitter of the open interval; defaults to 0.1.
        ///   - probeCalls: The probes of a half-open circuit; defaults to 10.
        ///   - key: Which circuit a call belongs to; defaults to ``Key/origin``.
        ///   - classify: How an outcome counts; defaults to ``defaultClassification(_:)``.
        public init(
            failureRateThreshold: Double = CircuitBreakerPlugin.defaultFailureRateThreshold,
            slowCallRateThreshold: Double = CircuitBreakerPlugin.defaultSlowCallRateThreshold,
            slowCallDuration: Duration = CircuitBreakerPlugin.defaultSlowCallDuration,
            window: Window = CircuitBreakerPlugin.defaultWindow,
            minimumCalls: Int = CircuitBreakerPlugin.defaultMinimumCalls,
            openInterval: Duration = CircuitBreakerPlugin.defaultOpenInterval,
            openIntervalJitter: Double = CircuitBreakerPlugin.defaultOpenIntervalJitter,
            probeCalls: Int = CircuitBreakerPlugin.defaultProbeCalls,
            key: Key = .origin,
            classify: @escaping @Sendable (Result) -> Classification = CircuitBreakerPlugin.defaultClassification
        ) {
            self.failureRateThreshold = failureRateThreshold
            self.slowCallRateThreshold = slowCallRateThreshold
            self.slowCallDuration = slowCallDuration
            self.window = window
            self.minimumCalls = minimumCalls
            self.openInterval = openInterval
            self.openIntervalJitter = openIntervalJitter
            self.probeCalls = probeCalls
            self.key = key
            self.classify = classify
        }

        /// Every default.
        public static var `default`: Configuration { Configuration() }
    }

    /// The statuses that count as failures by default: every 5xx, 429 Too Many Requests (RFC 6585 §4) and
    /// 408 Request Timeout (RFC 9110 §15.5.9). Other 4xx are the caller's mistake, not the origin's trouble.
    ///
    /// - Parameter status: A response status code.
    /// - Returns: Whether it counts as a failure of the origin.
    public static func isFailureStatus(_ status: Int) -> Bool {
        (500..<600).contains(status) || status == 429 || status == 408
    }

    /// The default classification: a failure is a status of ``isFailureStatus(_:)``, a timeout
    /// (``/NetworkAgent/NetworkAgentError/Code/timedOut``) or a transport failure
    /// (``/NetworkAgent/NetworkAgentError/Code/transport``: refused, reset, DNS, TLS…); a cancellation
    /// (``/NetworkAgent/NetworkAgentError/Code/cancelled`` or `CancellationError`) is ignored; any other response,
    /// other 4xx included, is a success (an error carrying a response counts by its status); any other error is
    /// ignored (it says nothing about the origin: an encoding error, another plugin's error).
    ///
    /// - Parameter result: What the call ended with.
    /// - Returns: How it counts.
    @Sendable public static func defaultClassification(_ result: Result) -> Classification {
        switch result {
        case .response(let response):
            return isFailureStatus(response.statusCode) ? .failure : .success
        case .error(let error):
            if error is CancellationError { return .ignored }
            guard let error = error as? NetworkAgentError else { return .ignored }
            if error.code == .cancelled { return .ignored }
            if error.code == .timedOut || error.code == .transport { return .failure }
            if let status = error.statusCode { return isFailureStatus(status) ? .failure : .success }
            return .ignored
        }
    }

    /// `scheme://host:port` of a URL, lowercased, with the scheme's default port made explicit and any user
    /// information left out (a key is a metrics label: it must never carry a password).
    ///
    /// Read from the URL's text in one pass over its bytes rather than through `URL`'s component accessors (they
    /// cost microseconds). The plugin builds it once per distinct `scheme://authority` text (see
    /// ``AuthorityText``), not per call.
    static func origin(of url: URL?) -> String {
        guard let url else { return "unknown" }
        var text = url.absoluteString
        return text.withUTF8 { bytes in
            guard let parts = AuthorityText.scan(bytes) else { return "unknown" }
            let scheme = UnsafeBufferPointer(rebasing: bytes[..<parts.schemeEnd])
            let authority = bytes[(parts.userInfoEnd.map { $0 + 1 } ?? parts.start)..<parts.end]
            // The port is after the last ':' that is not inside an IPv6 literal's brackets.
            var portColon: Int?
            for index in authority.indices {
                if authority[index] == UInt8(ascii: ":") { portColon = index }
                if authority[index] == UInt8(ascii: "]") { portColon = nil }
            }
            let host = UnsafeBufferPointer(rebasing: authority[..<(portColon ?? authority.endIndex)])
            var key = ""
            key.reserveCapacity(scheme.count + host.count + 12)
            appendLowercased(scheme, to: &key)
            key += "://"
            appendLowercased(host, to: &key)
            key += ":"
            if let portColon, portColon + 1 < authority.endIndex {
                key += String(decoding: authority[(portColon + 1)...], as: UTF8.self)
            } else if key.hasPrefix("https:") {
                key += "443"
            } else {
                key += key.hasPrefix("http:") ? "80" : "0"
            }
            return key
        }
    }

    /// Appends the bytes, ASCII letters lowercased.
    private static func appendLowercased(_ bytes: UnsafeBufferPointer<UInt8>, to key: inout String) {
        let text = String(decoding: bytes, as: UTF8.self)
        let hasUppercase = bytes.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
        key += hasUppercase ? text.lowercased() : text
    }
}
