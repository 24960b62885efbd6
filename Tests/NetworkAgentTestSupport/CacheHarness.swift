import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A loopback origin, a manual clock, a cache plugin on a store, and a provider: the harness of the disk and Redis
/// cache tests.
///
/// The server's handler is replaceable (``respond(_:)``), so a test can change what the origin says between
/// requests; it sees the request and the virtual time. Every request is sent inside ``recorder``, which records
/// the events the cache emits.
public final class CacheHarness: Sendable {
    /// What the origin answers, given the request and the virtual time.
    public typealias Handler = @Sendable (ServerRequest, Date) -> ServerResponse

    /// The cache's clock, from ``/NetworkAgentTesting/ManualClock/cacheStart``.
    public let clock = ManualClock(startDate: ManualClock.cacheStart)
    /// The origin.
    public let server: LoopbackServer
    /// The cache under test.
    public let plugin: DiskCachePlugin
    /// A provider with the cache as its only plugin, on `TestTransport.agent()`.
    public let provider: NetworkAgentProvider<CacheEndpoint>
    /// The events emitted while ``send(_:method:headers:)`` ran.
    public let recorder = EventRecorder()
    /// The directory of the disk store the harness made, if it made one.
    public let directory: TemporaryDirectory?
    private let handler: Locked<Handler>
    private let cleanUp: @Sendable () async -> Void

    /// Creates the harness.
    ///
    /// - Parameters:
    ///   - store: The store; `nil` for a `DiskStore` in a fresh temporary directory, removed with the harness.
    ///   - cleanUp: What removes `store`'s contents (and shuts it down) when the harness goes; it runs in a task of
    ///     its own, started as the harness goes.
    ///   - configure: Changes to the plugin's configuration (the clock is set already).
    ///   - handler: The origin's first behaviour.
    /// - Throws: When the server or the store cannot be set up.
    public init(
        store: (any ResponseStore)? = nil,
        cleanUp: @escaping @Sendable () async -> Void = {},
        configure: (inout DiskCachePlugin.Configuration) -> Void = { _ in },
        handler: @escaping Handler
    ) throws {
        let current = Locked(handler)
        let clock = self.clock
        server = try LoopbackServer { request in current.withLock { $0 }(request, clock.date) }
        self.handler = current
        self.cleanUp = cleanUp
        var configuration = DiskCachePlugin.Configuration(now: { [clock] in clock.date })
        configure(&configuration)
        if let store {
            directory = nil
            plugin = DiskCachePlugin(store: store, configuration: configuration)
        } else {
            let directory = try TemporaryDirectory()
            self.directory = directory
            plugin = try DiskCachePlugin(directory: directory.url, configuration: configuration)
        }
        provider = NetworkAgentProvider(plugins: [plugin], agent: TestTransport.agent())
    }

    deinit {
        server.stop()
        let cleanUp = self.cleanUp
        Task { await cleanUp() }
        directory?.remove()
    }

    /// Replaces the origin's behaviour.
    ///
    /// - Parameter newHandler: What the origin answers from now on.
    public func respond(_ newHandler: @escaping Handler) {
        handler.withLock { $0 = newHandler }
    }

    /// The number of requests the origin received.
    public var requestCount: Int { server.requestCount }

    /// The names of the cache's events (source `cache`) recorded so far.
    public var cacheEventNames: [String] { recorder.names(from: DiskCachePlugin.eventSource) }

    /// Sends a request through the cache.
    ///
    /// - Parameters:
    ///   - path: The resource.
    ///   - method: The method.
    ///   - headers: Header fields besides `Accept: text/plain`.
    ///   - timeout: The request's deadline.
    /// - Returns: The answer.
    /// - Throws: What the provider throws.
    public func send(
        _ path: String = "/resource",
        method: HTTPMethod = .get,
        headers: [String: String] = [:],
        timeout: Duration = .seconds(10)
    ) async throws -> CacheAnswer {
        var allHeaders = ["Accept": "text/plain"]
        allHeaders.merge(headers) { $1 }
        let endpoint = CacheEndpoint(
            baseURL: server.baseURL,
            path: path,
            method: method,
            headers: allHeaders,
            timeout: timeout
        )
        let (data, response) = try await recorder.observing { try await provider.request(endpoint: endpoint) }
        return CacheAnswer(
            body: String(decoding: data, as: UTF8.self),
            response: try #require(response as? HTTPURLResponse)
        )
    }
}
