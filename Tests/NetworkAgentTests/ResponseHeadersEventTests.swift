import Foundation
import Testing

@testable import NetworkAgent

/// The transport's `transport.response_headers` event formats its `seconds` attribute only when it is read; it must
/// be the event built with the attribute formatted at once, as it was.
@Suite struct ResponseHeadersEventTests {
    static let durations: [Duration] = [
        .zero, .nanoseconds(1), .microseconds(137), .milliseconds(1_500), .seconds(86_400),
        .nanoseconds(123_456_789_012), .seconds(-2), Duration(secondsComponent: 3, attosecondsComponent: 1),
    ]

    @Test func theLazyEventEqualsTheEventFormattedAtOnce() {
        for duration in Self.durations {
            let lazy = NetworkAgentEvent.responseHeaders(after: duration)
            let formatted = NetworkAgentEvent(
                .responseHeaders(after: duration),
                attributes: ["seconds": "\(duration.timeInterval)"]
            )
            #expect(lazy == formatted)
            #expect(lazy.kind == formatted.kind)
            #expect(lazy.attributes == formatted.attributes)
            #expect(lazy.description == formatted.description)
            #expect(lazy.source == "transport" && lazy.name == "response_headers")
        }
    }

    @Test func theLazyEventChangesAsAnyEventDoes() {
        var lazy = NetworkAgentEvent.responseHeaders(after: .milliseconds(250))
        var formatted = NetworkAgentEvent(.responseHeaders(after: .milliseconds(250)), attributes: ["seconds": "0.25"])
        // Another kind keeps the attributes the event had.
        lazy.kind = .cacheHit
        formatted.kind = .cacheHit
        #expect(lazy == formatted)
        #expect(lazy.attributes == ["seconds": "0.25"])
        lazy.attributes["hop"] = "2"
        formatted.attributes["hop"] = "2"
        #expect(lazy == formatted)
        #expect(lazy.description == "cache.hit hop=2 seconds=0.25")
        #expect(lazy != NetworkAgentEvent.responseHeaders(after: .milliseconds(250)))
        #expect(
            NetworkAgentEvent.responseHeaders(after: .milliseconds(250)).description
                == "transport.response_headers seconds=0.25"
        )
        let given = NetworkAgentEvent(.retryScheduled(delay: .zero), attributes: ["attempt": "1"])
        var copy = given
        copy.attributes["attempt"] = "2"
        #expect(given.description == "retry.retry_scheduled attempt=1")
        #expect(copy.description == "retry.retry_scheduled attempt=2")
    }

    /// The event as it was: a kind and its attributes.
    struct StoredAttributes {
        var kind: NetworkAgentEvent.Kind
        var attributes: [String: String]
    }

    /// A larger event makes every async frame holding one (or a metrics observation) larger: the full chain allocated
    /// two more blocks per request with the duration held a second time.
    @Test func theEventIsNoLargerThanAKindAndItsAttributes() {
        #expect(MemoryLayout<NetworkAgentEvent>.size == MemoryLayout<StoredAttributes>.size)
    }

    @Test func transportsEmitTheEventWithItsSeconds() async {
        let seen = Locked([NetworkAgentEvent]())
        await NetworkAgentEvents.observing({ event in seen.withLock { $0.append(event) } }) {
            HTTPTransportContext.reportResponseHeaders(after: .microseconds(1_250))
        }
        let expected = NetworkAgentEvent(
            .responseHeaders(after: .microseconds(1_250)),
            attributes: ["seconds": "0.00125"]
        )
        #expect(seen.withLock { $0 } == [expected])
    }
}
