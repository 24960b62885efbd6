import CCurl
import Testing

@testable import NetworkAgentCurl

/// The transfer's lifecycle without libcurl: every event in every state, against a table written out by hand.
///
/// The table lists each transition that changes the state or does something; every other pair of a state and an
/// event must leave the state as it is and do nothing (`none`), or, for an event of a libcurl callback that expects an
/// answer (body bytes, a fault, a starved upload), tell libcurl to abort.
@Suite struct CurlTransferStateTests {
    typealias State = CurlTransferState
    typealias Event = CurlTransferState.Event
    typealias Action = CurlTransferState.Action

    struct Row: Sendable {
        let state: State
        let event: Event
        let next: State
        let action: Action
    }

    static let responses: [State.Response] = [
        .awaitingHead(.collect), .awaitingHead(.stream(bufferLimit: 64)), .collecting(streamed: false),
        .collecting(streamed: true), .streaming(.flowing), .streaming(.pauseNext), .streaming(.paused),
    ]

    static let states: [State] =
        [.created, .stoppedBeforeStart(.cancelled)]
        + State.Upload.allCases.flatMap { upload in responses.map { State.running(upload, $0) } }
        + [.aborting(.consumerGone, streaming: false), .aborting(.consumerGone, streaming: true), .finished]

    static let failedCode = CURLE_RECV_ERROR
    static let events: [Event] = [
        .start(.collect), .start(.stream(bufferLimit: 64)), .stop(.timedOut), .fault(.responseTooLarge(limit: 10)),
        .headEnded(status: 200), .headEnded(status: 302), .headEnded(status: 0), .body, .bufferFull, .demand,
        .uploadStarved, .uploadReady, .done(CURLE_OK), .done(failedCode),
    ]

    /// Every transition that changes something, written out.
    static let table: [Row] = {
        var rows: [Row] = [
            Row(
                state: .created,
                event: .start(.collect),
                next: .running(.flowing, .awaitingHead(.collect)),
                action: .attach
            ),
            Row(
                state: .created,
                event: .start(.stream(bufferLimit: 64)),
                next: .running(.flowing, .awaitingHead(.stream(bufferLimit: 64))),
                action: .attach
            ),
            Row(state: .created, event: .stop(.timedOut), next: .stoppedBeforeStart(.timedOut), action: .none),
            // The stop that came first fails the caller once the transfer arrives; a later stop changes nothing.
            Row(
                state: .stoppedBeforeStart(.cancelled),
                event: .start(.collect),
                next: .finished,
                action: .end(.fail(.stopped(.cancelled)))
            ),
            Row(
                state: .stoppedBeforeStart(.cancelled),
                event: .start(.stream(bufferLimit: 64)),
                next: .finished,
                action: .end(.fail(.stopped(.cancelled)))
            ),
        ]
        for streaming in [false, true] {
            let aborting = State.aborting(.consumerGone, streaming: streaming)
            let failure = CurlTransferState.Failure.stopped(.consumerGone)
            let ending: Action = .end(streaming ? .failStream(failure) : .fail(failure))
            // libcurl's end or a stop from the loop: the reason libcurl was told to stop for stands.
            rows += [
                Row(state: aborting, event: .stop(.timedOut), next: .finished, action: ending),
                Row(state: aborting, event: .done(CURLE_OK), next: .finished, action: ending),
                Row(state: aborting, event: .done(failedCode), next: .finished, action: ending),
            ]
        }
        for upload in State.Upload.allCases {
            rows += runningRows(upload)
        }
        return rows
    }()

    static func runningRows(_ upload: State.Upload) -> [Row] {
        var rows: [Row] = []
        func row(_ response: State.Response, _ event: Event, _ next: State, _ action: Action) {
            rows.append(Row(state: .running(upload, response), event: event, next: next, action: action))
        }
        for response in responses {
            let streaming = if case .streaming = response { true } else { false }
            let stopped = CurlTransferState.Failure.stopped(.timedOut)
            row(response, .stop(.timedOut), .finished, .end(streaming ? .failStream(stopped) : .fail(stopped)))
            row(
                response,
                .fault(.responseTooLarge(limit: 10)),
                .aborting(.responseTooLarge(limit: 10), streaming: streaming),
                .abort
            )
            // The upload side: starved, it pauses; fed, it resumes (keeping a paused download paused).
            row(response, .uploadStarved, .running(.waiting, response), .pause)
            if upload == .waiting {
                row(
                    response,
                    .uploadReady,
                    .running(.flowing, response),
                    .setPause(receive: response == .streaming(.paused), send: false)
                )
            }
        }
        for mode in [State.Mode.collect, .stream(bufferLimit: 64)] {
            let streamed = mode != .collect
            let awaiting = State.Response.awaitingHead(mode)
            let collecting = State.running(upload, .collecting(streamed: streamed))
            row(
                awaiting,
                .headEnded(status: 200),
                streamed ? .running(upload, .streaming(.flowing)) : collecting,
                streamed ? .deliverHead(bufferLimit: 64) : .none
            )
            // A redirect's head, and a head without a status, are not handed on: the body is collected.
            row(awaiting, .headEnded(status: 302), collecting, .none)
            row(awaiting, .headEnded(status: 0), collecting, .none)
            row(awaiting, .body, collecting, .collect)
            row(awaiting, .done(CURLE_OK), .finished, .end(.fail(.noResponse)))
            row(awaiting, .done(failedCode), .finished, .end(.fail(.libcurl(failedCode))))
        }
        for streamed in [false, true] {
            let collecting = State.Response.collecting(streamed: streamed)
            row(collecting, .body, .running(upload, collecting), .collect)
            row(collecting, .done(CURLE_OK), .finished, .end(.respond(streamed: streamed)))
            row(collecting, .done(failedCode), .finished, .end(.fail(.libcurl(failedCode))))
        }
        for flow in State.Flow.allCases {
            row(.streaming(flow), .done(CURLE_OK), .finished, .end(.finishStream))
            row(.streaming(flow), .done(failedCode), .finished, .end(.failStream(.libcurl(failedCode))))
        }
        // Backpressure: a full buffer pauses at the next bytes; the consumer's demand resumes.
        row(.streaming(.flowing), .body, .running(upload, .streaming(.flowing)), .write)
        row(.streaming(.flowing), .bufferFull, .running(upload, .streaming(.pauseNext)), .none)
        row(.streaming(.pauseNext), .body, .running(upload, .streaming(.paused)), .pause)
        row(.streaming(.pauseNext), .demand, .running(upload, .streaming(.flowing)), .none)
        row(.streaming(.paused), .body, .running(upload, .streaming(.paused)), .pause)
        row(
            .streaming(.paused),
            .demand,
            .running(upload, .streaming(.flowing)),
            .setPause(receive: false, send: upload == .waiting)
        )
        return rows
    }

    /// What a pair the table does not list must give.
    static func unchanged(_ state: State, _ event: Event) -> (State, Action) {
        switch event {
        case .body, .fault, .uploadStarved: (state, .abort)
        default: (state, .none)
        }
    }

    @Test("every event in this state", arguments: states)
    func everyEvent(in state: State) {
        for event in Self.events {
            let row = Self.table.first { $0.state == state && $0.event == event }
            let (next, action) = row.map { ($0.next, $0.action) } ?? Self.unchanged(state, event)
            let result = State.transition(state, on: event)
            #expect(result.0 == next, "\(state) on \(event)")
            #expect(result.1 == action, "\(state) on \(event)")
        }
    }

    @Test func theTableNamesOnlyKnownStatesAndEventsOnce() {
        for (index, row) in Self.table.enumerated() {
            #expect(Self.states.contains(row.state) && Self.events.contains(row.event), "\(row)")
            #expect(
                !Self.table[..<index].contains { $0.state == row.state && $0.event == row.event },
                "listed twice: \(row.state) on \(row.event)"
            )
        }
    }

    @Test func aStreamedCallFromStartToEnd() {
        var state = State.created
        #expect(state.handle(.start(.stream(bufferLimit: 8))) == .attach)
        #expect(state.awaitsHead && !state.handedOnHead)
        #expect(state.handle(.headEnded(status: 200)) == .deliverHead(bufferLimit: 8))
        #expect(!state.awaitsHead && state.handedOnHead)
        #expect(state.handle(.body) == .write)
        #expect(state.handle(.bufferFull) == .none)
        #expect(state.handle(.body) == .pause)
        #expect(state.handle(.demand) == .setPause(receive: false, send: false))
        #expect(state.handle(.done(CURLE_OK)) == .end(.finishStream))
        #expect(state == .finished)
        #expect(state.handle(.stop(.cancelled)) == .none)
    }
}
