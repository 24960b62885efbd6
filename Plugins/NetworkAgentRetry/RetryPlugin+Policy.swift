public import Foundation
import NetworkAgent

extension RetryPlugin {
    /// The default number of attempts, the first one included: 3.
    public static let defaultMaximumAttempts = 3

    /// The default delay before the first retry, before jitter: 500 ms.
    public static let defaultBaseDelay: Duration = .milliseconds(500)

    /// The default factor by which the delay grows with each retry: 2.
    public static let defaultMultiplier = 2.0

    /// The default longest delay between two attempts, `Retry-After` included: 30 s.
    public static let defaultMaximumDelay: Duration = .seconds(30)

    /// The default time budget of a call, measured from the start of its first attempt: 60 s. No attempt starts
    /// whose delay would end after it.
    public static let defaultTimeBudget: Duration = .seconds(60)

    /// The status codes retried by default:
    /// 408 Request Timeout (RFC 9110 §15.5.9), 429 Too Many Requests (RFC 6585 §4),
    /// 500 Internal Server Error (RFC 9110 §15.6.1), 502 Bad Gateway (§15.6.3),
    /// 503 Service Unavailable (§15.6.4) and 504 Gateway Timeout (§15.6.5).
    public static let defaultRetryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// The status codes whose `Retry-After` header (RFC 9110 §10.2.3) sets the delay by default:
    /// 429 (RFC 6585 §4) and 503 (RFC 9110 §15.6.4).
    public static let defaultRetryAfterStatusCodes: Set<Int> = [429, 503]

    /// The transport failures retried by default: the request never reached the server, or the connection broke
    /// before an answer came. `timedOut`, `cannotConnectToHost` (refused), `networkConnectionLost` (lost or reset:
    /// libcurl's "Connection reset by peer"), `badServerResponse` (libcurl's "Empty reply from server": closed
    /// before any response), `cannotFindHost`, `dnsLookupFailed` and `notConnectedToInternet`.
    ///
    /// Left out because trying again cannot fix them: TLS failures (`secureConnectionFailed`, the
    /// `serverCertificate…` and `clientCertificate…` codes), `cancelled`, URL errors. Left out because they are too
    /// vague to be safe: `unknown` (which is also what libcurl reports for a body cut short).
    public static let defaultRetryableURLErrorCodes: Set<URLError.Code> = [
        .timedOut, .cannotConnectToHost, .networkConnectionLost, .badServerResponse, .cannotFindHost,
        .dnsLookupFailed, .notConnectedToInternet,
    ]

    /// The methods retried by default: the idempotent methods of RFC 9110 §9.2.2,
    /// `GET`, `HEAD`, `OPTIONS`, `TRACE`, `PUT` and `DELETE`.
    public static let defaultIdempotentMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]

    /// The header that makes a non-idempotent request safe to repeat (IETF draft
    /// `draft-ietf-httpapi-idempotency-key-header`): `Idempotency-Key`.
    public static let idempotencyKeyHeader = "Idempotency-Key"

    /// How the delay before each retry is chosen from the exponential backoff.
    ///
    /// With retry number `n` (1 for the first retry), the exponential delay is
    /// `min(maximumDelay, baseDelay × multiplier^(n − 1))`.
    public enum Jitter: Sendable, Hashable {
        /// The exponential delay itself. Clients that failed together retry together.
        case none
        /// A random delay between zero and the exponential delay, the default: it spreads clients that failed
        /// together over the whole window.
        case full
        /// A random delay between ``Policy/baseDelay`` and `multiplier` × the previous delay (the base delay
        /// before the first retry), capped at ``Policy/maximumDelay``: each delay grows from the one before, not
        /// from the retry number.
        case decorrelated
    }

    /// What happens to requests whose method is not in ``Policy/idempotentMethods``, such as `POST` and `PATCH`.
    ///
    /// RFC 9110 §9.2.2: a client should not retry a non-idempotent request automatically unless it knows that
    /// the request is in fact idempotent; an `Idempotency-Key` header is how it knows.
    public enum NonIdempotentMethods: Sendable, Hashable {
        /// Never retried, whatever their headers.
        case neverRetry
        /// Retried only when the request carries an `Idempotency-Key` header; the default.
        case retryWithIdempotencyKey
        /// Given a fresh `Idempotency-Key` when they carry none, then retried; every attempt of a call sends the
        /// same key.
        case addIdempotencyKey
    }

    /// When and how often a ``RetryPlugin`` tries a request again.
    ///
    /// Every property has a named default on ``RetryPlugin``. Out-of-range values are clamped when used: fewer
    /// than one attempt means one, a multiplier below 1 (or not finite) means 1, negative delays mean zero.
    public struct Policy: Sendable, Hashable {
        /// The most attempts of one call, the first one included; 1 turns retries off.
        public var maximumAttempts: Int
        /// The exponential delay before the first retry.
        public var baseDelay: Duration
        /// The factor by which the exponential delay grows with each retry.
        public var multiplier: Double
        /// The longest delay between two attempts. A `Retry-After` asking for more ends the retries and returns
        /// the server's response.
        public var maximumDelay: Duration
        /// How the delay is drawn from the exponential backoff.
        public var jitter: Jitter
        /// How long a call may take, from the start of its first attempt; `nil` for no limit. No retry is scheduled
        /// whose delay would end after the budget. An attempt in flight is not cut short: each attempt has the
        /// request's own timeout.
        public var timeBudget: Duration?
        /// The response status codes that are retried.
        public var retryableStatusCodes: Set<Int>
        /// The status codes whose `Retry-After` header, when it parses, replaces the backoff delay.
        public var retryAfterStatusCodes: Set<Int>
        /// The `URLError` codes behind a ``/NetworkAgent/NetworkAgentError/Code/transport`` failure that are retried.
        public var retryableURLErrorCodes: Set<URLError.Code>
        /// Whether an attempt that missed its deadline (``/NetworkAgent/NetworkAgentError/Code/timedOut``) is retried.
        public var retriesTimeouts: Bool
        /// The methods retried without further ado (compared case-insensitively).
        public var idempotentMethods: Set<String>
        /// What happens to requests with any other method.
        public var nonIdempotentMethods: NonIdempotentMethods
        /// The retry budget shared by every call through the plugin (gRPC's token bucket), or `nil` for none: each
        /// call then retries as its own policy allows, whatever the others see.
        public var budget: RetryBudget?

        /// The default policy: every property at its named default.
        public static let `default` = Policy()

        /// Creates a policy.
        ///
        /// - Parameters:
        ///   - maximumAttempts: See ``maximumAttempts``; defaults to ``RetryPlugin/defaultMaximumAttempts``.
        ///   - baseDelay: See ``baseDelay``; defaults to ``RetryPlugin/defaultBaseDelay``.
        ///   - multiplier: See ``multiplier``; defaults to ``RetryPlugin/defaultMultiplier``.
        ///   - maximumDelay: See ``maximumDelay``; defaults to ``RetryPlugin/defaultMaximumDelay``.
        ///   - jitter: See ``jitter``; defaults to ``Jitter/full``.
        ///   - timeBudget: See ``timeBudget``; defaults to ``RetryPlugin/defaultTimeBudget``.
        ///   - retryableStatusCodes: See ``retryableStatusCodes``; defaults to
        ///     ``RetryPlugin/defaultRetryableStatusCodes``.
        ///   - retryAfterStatusCodes: See ``retryAfterStatusCodes``; defaults to
        ///     ``RetryPlugin/defaultRetryAfterStatusCodes``.
        ///   - retryableURLErrorCodes: See ``retryableURLErrorCodes``; defaults to
        ///     ``RetryPlugin/defaultRetryableURLErrorCodes``.
        ///   - retriesTimeouts: See ``retriesTimeouts``; defaults to `true`.
        ///   - idempotentMethods: See ``idempotentMethods``; defaults to ``RetryPlugin/defaultIdempotentMethods``.
        ///   - nonIdempotentMethods: See ``nonIdempotentMethods``; defaults to
        ///     ``NonIdempotentMethods/retryWithIdempotencyKey``.
        ///   - budget: See ``budget``; defaults to ``RetryBudget/default``, `nil` turns it off.
        public init(
            maximumAttempts: Int = RetryPlugin.defaultMaximumAttempts,
            baseDelay: Duration = RetryPlugin.defaultBaseDelay,
            multiplier: Double = RetryPlugin.defaultMultiplier,
            maximumDelay: Duration = RetryPlugin.defaultMaximumDelay,
            jitter: Jitter = .full,
            timeBudget: Duration? = RetryPlugin.defaultTimeBudget,
            retryableStatusCodes: Set<Int> = RetryPlugin.defaultRetryableStatusCodes,
            retryAfterStatusCodes: Set<Int> = RetryPlugin.defaultRetryAfterStatusCodes,
            retryableURLErrorCodes: Set<URLError.Code> = RetryPlugin.defaultRetryableURLErrorCodes,
            retriesTimeouts: Bool = true,
            idempotentMethods: Set<String> = RetryPlugin.defaultIdempotentMethods,
            nonIdempotentMethods: NonIdempotentMethods = .retryWithIdempotencyKey,
            budget: RetryBudget? = .default
        ) {
            self.maximumAttempts = maximumAttempts
            self.baseDelay = baseDelay
            self.multiplier = multiplier
            self.maximumDelay = maximumDelay
            self.jitter = jitter
            self.timeBudget = timeBudget
            self.retryableStatusCodes = retryableStatusCodes
            self.retryAfterStatusCodes = retryAfterStatusCodes
            self.retryableURLErrorCodes = retryableURLErrorCodes
            self.retriesTimeouts = retriesTimeouts
            self.idempotentMethods = idempotentMethods
            self.nonIdempotentMethods = nonIdempotentMethods
            self.budget = budget
        }
    }
}
