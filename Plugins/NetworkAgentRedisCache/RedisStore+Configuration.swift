import Foundation

extension RedisStore {
    /// How a ``RedisStore`` reaches Redis and what it keeps there: one `struct` of named defaults, passed once.
    public struct Configuration: Sendable {
        /// The default key prefix: `networkagent:cache`.
        public static let defaultKeyPrefix = "networkagent:cache"
        /// The default connect timeout: 1 second.
        public static let defaultConnectTimeout: Duration = .seconds(1)
        /// The default command timeout: 500 ms. A slower Redis makes a request miss, never fail.
        public static let defaultCommandTimeout: Duration = .milliseconds(500)
        /// The default wait before the first reconnection attempt after a failure: 100 ms, doubling per failure.
        public static let defaultReconnectDelay: Duration = .milliseconds(100)
        /// The default longest wait between reconnection attempts: 5 seconds.
        public static let defaultMaximumReconnectDelay: Duration = .seconds(5)
        /// The default largest body shared: 1 MiB. Larger responses are not stored.
        public static let defaultMaximumEntryBytes = 1 << 20
        /// The default time an entry with a validator is kept past its usable life: 1 day.
        public static let defaultValidatorKeepPeriod: Duration = .seconds(86_400)
        /// The default longest life of a revalidation lock: 10 seconds (it is released as soon as the revalidation
        /// ends).
        public static let defaultRevalidationLockDuration: Duration = .seconds(10)
        /// The default time a request waits for another process's revalidation: 2 seconds.
        public static let defaultRevalidationWaitLimit: Duration = .seconds(2)
        /// The default number of connections, each with its own thread: 2.
        public static let defaultConnectionCount = 2

        /// The server: `redis://[[user]:password@]host[:port][/db]`; port 6379 and database 0 by default.
        public var url: URL
        /// Prepended to every key (`<prefix>:e:…`), so that several apps share one Redis without seeing each
        /// other's entries. Defaults to ``defaultKeyPrefix``.
        public var keyPrefix: String
        /// How long opening a connection may take. Defaults to ``defaultConnectTimeout``.
        public var connectTimeout: Duration
        /// How long one command may take before the connection is dropped, the store is treated as down and the
        /// request misses: the most a store problem adds to a request. Also the lease of a revalidation lock.
        /// Defaults to ``defaultCommandTimeout``.
        public var commandTimeout: Duration
        /// The wait before the first background probe after a failure, measured from the end of the failed
        /// attempt; it doubles with each failed probe up to ``maximumReconnectDelay``. Requests made while the
        /// store is down miss at once. Defaults to ``defaultReconnectDelay``.
        public var reconnectDelay: Duration
        /// See ``reconnectDelay``. Defaults to ``defaultMaximumReconnectDelay``.
        public var maximumReconnectDelay: Duration
        /// The largest response body stored; larger responses are not shared. Defaults to
        /// ``defaultMaximumEntryBytes``.
        public var maximumEntryBytes: Int
        /// How long an entry that carries an `ETag` or `Last-Modified` is kept after it can no longer answer by
        /// itself, to turn a full response into a `304`. Zero expires every entry at the end of its usable life.
        /// Defaults to ``defaultValidatorKeepPeriod``.
        public var validatorKeepPeriod: Duration
        /// How long a holder keeps renewing its revalidation lock (a lease of ``commandTimeout``) before letting it
        /// lapse; a holder that is gone stops renewing at once. Defaults to ``defaultRevalidationLockDuration``.
        public var revalidationLockDuration: Duration
        /// How long a request that needs a stale entry revalidated waits for the process holding the lock; zero
        /// never waits. Defaults to ``defaultRevalidationWaitLimit``.
        public var revalidationWaitLimit: Duration
        /// The number of connections (each served by its own thread, commands pipelined). Defaults to
        /// ``defaultConnectionCount``.
        public var connectionCount: Int

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - url: See ``url``.
        ///   - keyPrefix: See ``keyPrefix``.
        ///   - connectTimeout: See ``connectTimeout``.
        ///   - commandTimeout: See ``commandTimeout``.
        ///   - reconnectDelay: See ``reconnectDelay``.
        ///   - maximumReconnectDelay: See ``maximumReconnectDelay``.
        ///   - maximumEntryBytes: See ``maximumEntryBytes``.
        ///   - validatorKeepPeriod: See ``validatorKeepPeriod``.
        ///   - revalidationLockDuration: See ``revalidationLockDuration``.
        ///   - revalidationWaitLimit: See ``revalidationWaitLimit``.
        ///   - connectionCount: See ``connectionCount``.
        public init(
            url: URL,
            keyPrefix: String = defaultKeyPrefix,
            connectTimeout: Duration = defaultConnectTimeout,
            commandTimeout: Duration = defaultCommandTimeout,
            reconnectDelay: Duration = defaultReconnectDelay,
            maximumReconnectDelay: Duration = defaultMaximumReconnectDelay,
            maximumEntryBytes: Int = defaultMaximumEntryBytes,
            validatorKeepPeriod: Duration = defaultValidatorKeepPeriod,
            revalidationLockDuration: Duration = defaultRevalidationLockDuration,
            revalidationWaitLimit: Duration = defaultRevalidationWaitLimit,
            connectionCount: Int = defaultConnectionCount
        ) {
            self.url = url
            self.keyPrefix = keyPrefix
            self.connectTimeout = connectTimeout
            self.commandTimeout = commandTimeout
            self.reconnectDelay = reconnectDelay
            self.maximumReconnectDelay = maximumReconnectDelay
            self.maximumEntryBytes = maximumEntryBytes
            self.validatorKeepPeriod = validatorKeepPeriod
            self.revalidationLockDuration = revalidationLockDuration
            self.revalidationWaitLimit = revalidationWaitLimit
            self.connectionCount = connectionCount
        }
    }
}
