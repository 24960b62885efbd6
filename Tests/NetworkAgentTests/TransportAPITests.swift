import Foundation
import NetworkAgent
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The public API a transport in another module is written with (this file imports the core without `@testable`):
/// a streamed body with backpressure, what the calling exchange tells its transport, and timings on a response.
@Suite struct TransportAPITests {
    /// Counts what the stream asked of its producer.
    final class ProducerLog: Sendable {
        private let counts = Counts()
        var demands: Int { counts.value(\.demands) }
        var terminations: Int { counts.value(\.terminations) }
        func demanded() { counts.bump(\.demands) }
        func terminated() { counts.bump(\.terminations) }

        /// `@unchecked Sendable`: every access holds `lock`.
        final class Counts: @unchecked Sendable {
            private let lock = NSLock()
            private var numbers = (demands: 0, terminations: 0)
            func bump(_ path: WritableKeyPath<(demands: Int, terminations: Int), Int>) {
                lock.withLock { numbers[keyPath: path] += 1 }
            }
            func value(_ path: KeyPath<(demands: Int, terminations: Int), Int>) -> Int {
                lock.withLock { numbers[keyPath: path] }
            }
        }
    }

    func makeStream(limit: Int, log: ProducerLog) -> (stream: HTTPByteStream, writer: HTTPBodyWriter) {
        HTTPByteStream.makeStream(
            bufferLimit: limit,
            onDemand: { log.demanded() },
            onTermination: { log.terminated() }
        )
    }

    @Test func writeAsksToPauseAtTheLimitAndDemandComesOnceTheBufferIsRead() async throws {
        let log = ProducerLog()
        let (stream, writer) = makeStream(limit: 10, log: log)
        #expect(writer.write(Data(count: 4)))
        #expect(!writer.write(Data(count: 6)), "10 bytes wait: the producer is told to pause")
        // A paused producer may still hand over the chunk it holds; nothing is lost.
        #expect(!writer.write(Data(count: 3)))
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next()?.count == 4)
        #expect(try await iterator.next()?.count == 6)
        #expect(log.demands == 0, "bytes still wait: no demand yet")
        #expect(try await iterator.next()?.count == 3)
        #expect(log.demands == 1, "the buffer was read to empty: the producer is resumed once")
        #expect(writer.write(Data(count: 2)))
        writer.finish()
        #expect(try await iterator.next()?.count == 2)
        #expect(try await iterator.next() == nil)
        #expect(log.demands == 1)
        #expect(log.terminations == 0, "a body the writer finished is not terminated")
        #expect(writer.isTerminated)
    }

    @Test func aPausingStreamNeverOverflows() async throws {
        let log = ProducerLog()
        let (stream, writer) = makeStream(limit: 8, log: log)
        for _ in 0..<100 { writer.write(Data(count: 8)) }
        writer.finish()
        var total = 0
        for try await chunk in stream { total += chunk.count }
        #expect(total == 800, "a transport that can pause is never failed with streamOverflow")
    }

    @Test func droppingTheStreamUnreadTerminatesTheProducer() {
        let log = ProducerLog()
        let writer = writerOfADroppedStream(log: log)
        #expect(log.terminations == 1)
        #expect(writer.isTerminated)
        #expect(writer.write(Data(count: 1)) == false, "writing to a body nobody reads says stop")
    }

    /// Makes a stream, writes to it and drops it unread when the function returns. The drop ends a function, not a
    /// statement (`made = nil`): optimised code may end a value's lifetime anywhere up to the end of its scope, and the
    /// release run saw the stream still alive after such an assignment.
    @inline(never)
    func writerOfADroppedStream(log: ProducerLog) -> HTTPBodyWriter {
        let (stream, writer) = makeStream(limit: 8, log: log)
        writer.write(Data(count: 1))
        withExtendedLifetime(stream) {}
        #expect(log.terminations == 0, "the stream is still there")
        return writer
    }

    @Test func cancellingTheReaderTerminatesTheProducer() async throws {
        let log = ProducerLog()
        let (stream, writer) = makeStream(limit: 8, log: log)
        let reader = Task {
            for try await _ in stream {}
        }
        reader.cancel()
        await #expect(throws: NetworkAgentError.self) { try await reader.value }
        #expect(log.terminations == 1)
        #expect(writer.isTerminated)
    }

    @Test func aWriterFailureReachesTheReaderAfterWhatWaits() async throws {
        let log = ProducerLog()
        let (stream, writer) = makeStream(limit: 64, log: log)
        writer.write(Data("abc".utf8))
        writer.finish(throwing: URLError(.networkConnectionLost))
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == Data("abc".utf8))
        let error = await #expect(throws: NetworkAgentError.self) { _ = try await iterator.next() }
        #expect(error?.code == .transport)
        #expect((error?.underlying as? URLError)?.code == .networkConnectionLost)
    }

    @Test func timingsTravelOnTheResponse() throws {
        let url = try #require(URL(string: "http://127.0.0.1:1/"))
        let timings = HTTPTransferTimings(
            nameLookup: .microseconds(10),
            connect: .microseconds(20),
            firstByte: .microseconds(40),
            total: .microseconds(50)
        )
        let response = try #require(
            HTTPURLResponse.withTransferTimings(
                timings,
                url: url,
                statusCode: 200,
                httpVersion: "HTTP/2",
                headerFields: ["Content-Type": "text/plain"]
            )
        )
        #expect(response.transferTimings == timings)
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "content-type") == "text/plain")
        let plain = try #require(
            HTTPURLResponse.withTransferTimings(nil, url: url, statusCode: 204, httpVersion: nil, headerFields: nil)
        )
        #expect(plain.transferTimings == nil)
    }

    @Test func theExchangeToldTheTransportItsLimitAndProgressHandler() async throws {
        let seen = SeenByTransport()
        let agent = NetworkAgent(
            transport: RecordingTransport(seen: seen),
            configuration: NetworkAgentConfiguration(maximumResponseBytes: 1234)
        )
        var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:1/x")))
        request.timeoutInterval = 3
        _ = try await agent.send(request, progress: { _ in })
        #expect(seen.limit == 1234)
        #expect(seen.hadProgressHandler)
        #expect(seen.timeLimit == .seconds(3))
    }

    @Test func timeLimitRules() throws {
        var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:1/x")))
        request.timeoutInterval = .infinity
        #expect(try HTTPTransportContext.timeLimit(of: request) == nil)
        request.timeoutInterval = 0.25
        #expect(try HTTPTransportContext.timeLimit(of: request) == .milliseconds(250))
        request.timeoutInterval = -1
        let error = #expect(throws: NetworkAgentError.self) { try HTTPTransportContext.timeLimit(of: request) }
        #expect(error?.code == .invalidTimeout)
    }

    @Test func errorsMapAsURLSessionTransportMapsThem() {
        #expect(HTTPTransportContext.error(for: URLError(.timedOut), request: nil).code == .timedOut)
        #expect(HTTPTransportContext.error(for: URLError(.cancelled), request: nil).code == .cancelled)
        let refused = HTTPTransportContext.error(for: URLError(.cannotConnectToHost), request: nil)
        #expect(refused.code == .transport)
        #expect((refused.underlying as? URLError)?.code == .cannotConnectToHost)
        let own = NetworkAgentError(.responseTooLarge, "x")
        #expect(HTTPTransportContext.error(for: own, request: nil).code == .responseTooLarge)
    }

    /// What ``RecordingTransport`` saw of its exchange. `@unchecked Sendable`: every access holds `lock`.
    final class SeenByTransport: @unchecked Sendable {
        private let lock = NSLock()
        private var values: (Int?, Bool, Duration?) = (nil, false, nil)
        var limit: Int? { lock.withLock { values.0 } }
        var hadProgressHandler: Bool { lock.withLock { values.1 } }
        var timeLimit: Duration? { lock.withLock { values.2 } }
        func record(limit: Int?, progress: Bool, timeLimit: Duration?) {
            lock.withLock { values = (limit, progress, timeLimit) }
        }
    }

    /// Answers every request with an empty 200 and records what the exchange told it.
    struct RecordingTransport: HTTPTransport {
        let seen: SeenByTransport

        func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
            seen.record(
                limit: HTTPTransportContext.maximumResponseBytes,
                progress: HTTPTransportContext.progressHandler != nil,
                timeLimit: try HTTPTransportContext.timeLimit(of: request)
            )
            HTTPTransportContext.progressHandler?(TransferProgress())
            guard let url = request.url,
                let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: [:])
            else { throw NetworkAgentError(.invalidResponse, "no URL") }
            return (data: Data(), response: response)
        }
    }
}
