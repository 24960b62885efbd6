import Foundation
import NetworkAgent
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Emits the events it was given inside the exchange, the first one from a child task.
struct Emitter: NetworkAgentPlugin {
    let events: [NetworkAgentEvent]

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        if let first = events.first {
            await Task { NetworkAgentEvents.emit(first) }.value
        }
        for event in events.dropFirst() { NetworkAgentEvents.emit(event) }
        return try await next(request)
    }
}

struct Ping: NetworkAgentEndpoint {
    var baseURL: URL { URL(string: "https://events.test")! }
    var path: String { "/ping" }
    var method: HTTPMethod { .get }
    var task: HTTPTask { .requestPlain }
}

@Suite struct EventRecorderTests {
    static let scheduled = NetworkAgentEvent(.retryScheduled(delay: .milliseconds(5)), attributes: ["attempt": "1"])
    static let hit = NetworkAgentEvent(.cacheHit)
    static let custom = NetworkAgentEvent(source: "mine", name: "retry_scheduled")

    func provider(emitting events: [NetworkAgentEvent]) -> NetworkAgentProvider<Ping> {
        NetworkAgentProvider(
            plugins: [Emitter(events: events)],
            agent: NetworkAgent(transport: StubTransport(fallback: .status(204)))
        )
    }

    @Test func recordsWhatThePluginsEmitInOrderChildTasksIncluded() async throws {
        let recorder = EventRecorder()
        let provider = provider(emitting: [Self.scheduled, Self.hit, Self.custom])

        let (_, response) = try await recorder.observing { try await provider.request(endpoint: Ping()) }

        #expect((response as? HTTPURLResponse)?.statusCode == 204)
        #expect(recorder.events == [Self.scheduled, Self.hit, Self.custom])
        #expect(recorder.names() == ["retry_scheduled", "hit", "retry_scheduled"])
    }

    @Test func filtersBySourceAndName() async throws {
        let recorder = EventRecorder()
        try await recorder.observing {
            _ = try await provider(emitting: [Self.scheduled, Self.hit, Self.custom]).request(endpoint: Ping())
        }

        #expect(recorder.events(from: "retry") == [Self.scheduled])
        #expect(recorder.events(named: "retry_scheduled") == [Self.scheduled, Self.custom])
        #expect(recorder.events(from: "mine", named: "retry_scheduled") == [Self.custom])
        #expect(recorder.events(from: "cache", named: "miss").isEmpty)
        #expect(recorder.names(from: "cache") == ["hit"])
        #expect(recorder.count() == 3)
        #expect(recorder.count(named: "retry_scheduled") == 2)
        #expect(recorder.count(from: "retry", named: "retry_scheduled") == 1)
    }

    @Test func recordsOnlyInsideObservingAndClearForgets() async throws {
        let recorder = EventRecorder()
        NetworkAgentEvents.emit(Self.hit)  // no observer: not recorded
        await recorder.observing { NetworkAgentEvents.emit(Self.scheduled) }
        NetworkAgentEvents.emit(Self.hit)
        #expect(recorder.events == [Self.scheduled])

        recorder.clear()
        #expect(recorder.events.isEmpty)
        await recorder.observing { NetworkAgentEvents.emit(Self.custom) }
        #expect(recorder.events == [Self.custom])
    }

    @Test func addsToTheObserversAlreadyInstalled() async {
        let outer = EventRecorder()
        let inner = EventRecorder()
        await outer.observing {
            NetworkAgentEvents.emit(Self.hit)
            await inner.observing { NetworkAgentEvents.emit(Self.scheduled) }
        }
        #expect(outer.events == [Self.hit, Self.scheduled])
        #expect(inner.events == [Self.scheduled])
    }

    @Test func theObserverRecordsForAnyCaller() async {
        let recorder = EventRecorder()
        await NetworkAgentEvents.observing(recorder.observer) { NetworkAgentEvents.emit(Self.hit) }
        recorder.record(Self.custom)
        #expect(recorder.events == [Self.hit, Self.custom])
    }

    @Test func concurrentCallsAllRecord() async {
        let recorder = EventRecorder()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 {
                group.addTask { await recorder.observing { NetworkAgentEvents.emit(Self.hit) } }
            }
        }
        #expect(recorder.count(from: "cache", named: "hit") == 100)
    }

    @Test func isSendable() async {
        let recorder = EventRecorder()
        await Task.detached { await recorder.observing { NetworkAgentEvents.emit(Self.hit) } }.value
        #expect(recorder.count() == 1)
    }
}
