import Dispatch
import Foundation
import NetworkAgent
import NetworkAgentTestServer
import Testing

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Nothing slow runs on the engine thread, which serves every request of a transport: a request body that blocks,
/// or a progress handler that does, holds up only its own request. Before, both ran on the engine thread and the
/// other requests waited as long as they blocked.
@Suite(.timeLimit(.minutes(1))) struct CurlEngineThreadTests {
    /// Holds whoever waits until it is opened, or for at most the time given (then it stays open).
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let isOpen = Locked(false)

        func wait(upTo timeout: Duration) {
            guard !isOpen.withLock({ $0 }) else { return }
            let nanoseconds = Int(timeout.components.seconds) * 1_000_000_000
            // Passed on, so that every waiter gets through once it is open.
            if semaphore.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success {
                semaphore.signal()
            } else {
                isOpen.withLock { $0 = true }
            }
        }

        func open() {
            isOpen.withLock { $0 = true }
            semaphore.signal()
        }
    }

    /// A request body whose first read blocks until its gate opens (at most 5 s), then gives a few bytes and ends.
    final class BlockingStream: InputStream {
        static let payload = Data("late body".utf8)
        let gate: Gate
        let entered = Locked(false)
        private let sent = Locked(false)

        init(gate: Gate) {
            self.gate = gate
            super.init(data: Data())
        }

        override func open() {}
        override func close() {}
        override var hasBytesAvailable: Bool { !sent.withLock { $0 } }

        override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
            guard !sent.withLock({ $0 }) else { return 0 }
            entered.withLock { $0 = true }
            gate.wait(upTo: .seconds(5))
            sent.withLock { $0 = true }
            Self.payload.copyBytes(to: buffer, count: min(length, Self.payload.count))
            return min(length, Self.payload.count)
        }
    }

    /// A request body whose first read fails.
    final class FailingStream: InputStream {
        init() { super.init(data: Data()) }
        override func open() {}
        override func close() {}
        override var hasBytesAvailable: Bool { true }
        override var streamError: (any Error)? { POSIXError(.EIO) }
        override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int { -1 }
    }

    static func server() throws -> LoopbackServer {
        try LoopbackServer { request in
            switch request.path {
            case "/upload": .text("got \(request.body.count)")
            case "/big": ServerResponse(body: .data(Data(repeating: 7, count: 1 << 20)))
            default: .text("ok")
            }
        }
    }

    /// Sends 100 GETs at once on `transport`; returns how long the slowest took.
    static func hundredGETs(_ transport: CurlTransport, _ server: LoopbackServer) async throws -> Duration {
        try await withThrowingTaskGroup(of: Duration.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let started = ContinuousClock.now
                    let (text, _) = try await transport.text(request(server, "/get/\(index)"))
                    #expect(text == "ok")
                    return started.duration(to: .now)
                }
            }
            var slowest = Duration.zero
            for try await elapsed in group { slowest = max(slowest, elapsed) }
            return slowest
        }
    }

    @Test func anUploadWhoseStreamBlocksDelaysNoOtherRequest() async throws {
        let server = try Self.server()
        let transport = CurlTransport()
        let gate = Gate()
        let stream = BlockingStream(gate: gate)
        var upload = request(server, "/upload", method: "POST")
        upload.httpBodyStream = stream
        let uploading = Task { try await transport.text(upload) }
        #expect(await eventually { stream.entered.withLock { $0 } })
        // The upload's stream is blocked (for up to 5 s): 100 GETs on the same transport go on meanwhile.
        let slowest = try await Self.hundredGETs(transport, server)
        gate.open()
        #expect(slowest < .seconds(2), "the slowest of 100 GETs took \(slowest) beside a blocked upload")
        // Once its stream gives its bytes, the upload completes.
        let (text, _) = try await uploading.value
        #expect(text == "got \(BlockingStream.payload.count)")
        await transport.shutdown()
    }

    @Test func aProgressHandlerThatBlocksDelaysNoOtherRequest() async throws {
        let server = try Self.server()
        let transport = CurlTransport()
        let agent = NetworkAgent(transport: transport)
        let gate = Gate()
        let reports = Locked<[TransferProgress]>([])
        let big = Task {
            try await agent.send(request(server, "/big")) { progress in
                reports.withLock { $0.append(progress) }
                gate.wait(upTo: .seconds(3))
            }
        }
        #expect(await eventually { !reports.withLock { $0.isEmpty } })
        // The handler is blocked (for up to 3 s): 100 GETs on the same transport go on meanwhile.
        let slowest = try await Self.hundredGETs(transport, server)
        gate.open()
        #expect(slowest < .seconds(2), "the slowest of 100 GETs took \(slowest) beside a blocked progress handler")
        let (data, _) = try await big.value
        #expect(data.count == 1 << 20)
        // Coalesced, in order, and complete before the call returned.
        let received = reports.withLock { $0.map(\.bytesReceived) }
        #expect(received == received.sorted())
        #expect(received.last == 1 << 20)
        await transport.shutdown()
    }

    @Test func aStreamBodyThatFailsFailsItsRequestWithATypedError() async throws {
        let server = try Self.server()
        let transport = CurlTransport()
        var upload = request(server, "/upload", method: "POST")
        upload.httpBodyStream = FailingStream()
        let error = await networkError { _ = try await transport.send(upload) }
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .cannotLoadFromNetwork)
        #expect(
            error?.description.contains("the request body could not be read") == true,
            "\(String(describing: error))"
        )
        await transport.shutdown()
    }
}
