import NetworkAgent
import NetworkAgentMetrics
import Testing

/// Circuit breaker state changes (`circuit_breaker.state_changed`, emitted by NetworkAgentCircuitBreaker) become a
/// state gauge per key and a transitions counter.
@Suite struct MetricsCircuitBreakerTests {
    static func changed(
        _ key: String,
        _ from: NetworkAgentEvent.CircuitState,
        _ to: NetworkAgentEvent.CircuitState
    )
        -> MetricsObservation
    {
        .event(
            MetricsLabels(route: "r", method: "GET"),
            NetworkAgentEvent(.circuitStateChanged(key: key, from: from, to: to))
        )
    }

    @Test func stateChangesBecomeAGaugePerKeyAndACounter() {
        let registry = MetricsRegistry()
        registry.handle(Self.changed("http://a:80", .closed, .open))
        registry.handle(Self.changed("http://b:80", .closed, .open))
        registry.handle(Self.changed("http://a:80", .open, .halfOpen))
        registry.handle(Self.changed("http://a:80", .halfOpen, .closed))
        let snapshot = registry.snapshot()
        let gauge = "networkagent_circuit_breaker_state"
        #expect(snapshot.value(gauge, ["key": "http://a:80", "state": "closed"]) == 1)
        #expect(snapshot.value(gauge, ["key": "http://a:80", "state": "open"]) == 0)
        #expect(snapshot.value(gauge, ["key": "http://a:80", "state": "half_open"]) == 0)
        #expect(snapshot.value(gauge, ["key": "http://b:80", "state": "open"]) == 1)
        let transitions = "networkagent_circuit_breaker_transitions_total"
        #expect(snapshot.total(transitions, matching: ["key": "http://a:80"]) == 3)
        #expect(snapshot.value(transitions, ["key": "http://b:80", "from": "closed", "to": "open"]) == 1)
        #expect(snapshot.total("networkagent_plugin_events_total") == 0)
        let text = registry.prometheusText()
        #expect(text.contains("# TYPE networkagent_circuit_breaker_state gauge"))
        #expect(text.contains(#"networkagent_circuit_breaker_state{key="http://b:80",state="open"} 1"#))
    }
}
