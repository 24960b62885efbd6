import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An endpoint on a loopback server.
struct CacheEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path: String
    var method = HTTPMethod.get
    var headers: [String: String] = ["Accept": "text/plain"]
    var task = HTTPTask.requestPlain
    var timeout: Duration? = .seconds(10)
}

extension ManualClock {
    /// 2023-11-14T22:13:20Z: the fixed start of the cache tests' clock, so HTTP dates in tests are exact.
    static let cacheStart = Date(timeIntervalSince1970: 1_700_000_000)
}

/// Collects the events emitted inside `observing`.
final class EventLog: Sendable {
    private let events = Locked<[NetworkAgentEvent]>([])

    var all: [NetworkAgentEvent] { events.withLock { $0 } }

    func names(source: String = DiskCachePlugin.eventSource) -> [String] {
        all.filter { $0.source == source }.map(\.name)
    }

    func observe<T>(_ operation: () async throws -> T) async rethrows -> T {
        try await NetworkAgentEvents.observing({ [self] event in events.withLock { $0.append(event) } }) {
            try await operation()
        }
    }
}

/// A directory under the temporary directory, removed by ``remove()``.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("diskcache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// An IMF-fixdate (RFC 9110 §5.6.7) for a `Date` header.
func httpDate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}

/// One answer of a cache test: body text, response and cache status.
struct CacheAnswer {
    let body: String
    let response: HTTPURLResponse
    var status: CacheStatus? { CacheStatus(response: response) }
    func header(_ name: String) -> String? { response.value(forHTTPHeaderField: name) }
}

/// A loopback server, a manual clock, a cache plugin on a disk store in a temporary directory, and a provider.
///
/// The server's handler is replaceable (``respond(_:)``), so a test can change what the origin says between
/// requests; it sees the request and the virtual time.
final class CacheHarness: Sendable {
    typealias Handler = @Sendable (ServerRequest, Date) -> ServerResponse

    let clock = ManualClock(startDate: ManualClock.cacheStart)
    let server: LoopbackServer
    let plugin: DiskCachePlugin
    let provider: NetworkAgentProvider<CacheEndpoint>
    let events = EventLog()
    let directory: TemporaryDirectory?
    private let origin: Origin

    /// The replaceable behaviour of the server.
    private final class Origin: Sendable {
        let handler: Locked<Handler>
        init(_ handler: @escaping Handler) { self.handler = Locked(handler) }
    }

    /// - Parameters:
    ///   - store: The store; `nil` for a ``DiskStore`` in a fresh temporary directory.
    ///   - configure: Changes to the plugin's configuration (the clock is set already).
    ///   - handler: The origin's first behaviour.
    init(
        store: (any ResponseStore)? = nil,
        configure: (inout DiskCachePlugin.Configuration) -> Void = { _ in },
        handler: @escaping Handler
    ) throws {
        let origin = Origin(handler)
        let clock = self.clock
        server = try LoopbackServer { request in
            let current = origin.handler.withLock { $0 }
            return current(request, clock.date)
        }
        self.origin = origin
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
        directory?.remove()
    }

    /// Replaces the origin's behaviour.
    func respond(_ handler: @escaping Handler) {
        origin.handler.withLock { $0 = handler }
    }

    /// The number of requests the origin received.
    var requestCount: Int { server.requestCount }

    /// Sends a request through the cache.
    func send(
        _ path: String = "/resource",
        method: HTTPMethod = .get,
        headers: [String: String] = [:]
    ) async throws -> CacheAnswer {
        var allHeaders = ["Accept": "text/plain"]
        allHeaders.merge(headers) { $1 }
        let endpoint = CacheEndpoint(baseURL: server.baseURL, path: path, method: method, headers: allHeaders)
        let (data, response) = try await events.observe { try await provider.request(endpoint: endpoint) }
        return CacheAnswer(
            body: String(decoding: data, as: UTF8.self),
            response: try #require(response as? HTTPURLResponse)
        )
    }
}

extension ServerResponse {
    /// A text response with a `Date` header at the virtual time and the given header fields.
    static func cached(
        _ text: String,
        status: Int = 200,
        at date: Date,
        _ headers: [(name: String, value: String)] = []
    ) -> ServerResponse {
        .text(text, status: status, headers: [("Date", httpDate(date))] + headers)
    }
}
