import NetworkAgent

/// One phase of a transfer, as the `phase` label of `networkagent_transfer_phase_seconds`, with its duration derived
/// from the transport's cumulative ``/NetworkAgent/HTTPTransferTimings``.
///
/// Each phase runs from the end of the latest earlier phase that happened (or from the start of the transfer) to its
/// own end:
///
/// | phase | label | from | to |
/// |---|---|---|---|
/// | ``dns`` | `dns` | start | ``/NetworkAgent/HTTPTransferTimings/nameLookup`` |
/// | ``connect`` | `connect` | name lookup | ``/NetworkAgent/HTTPTransferTimings/connect`` |
/// | ``tls`` | `tls` | connect | ``/NetworkAgent/HTTPTransferTimings/tlsHandshake`` |
/// | ``pretransfer`` | `pretransfer` | connection ready | ``/NetworkAgent/HTTPTransferTimings/preTransfer`` |
/// | ``firstByte`` | `first_byte` | request ready to send | ``/NetworkAgent/HTTPTransferTimings/firstByte`` |
/// | ``transfer`` | `transfer` | first byte | ``/NetworkAgent/HTTPTransferTimings/total`` |
///
/// ``firstByte`` is sending the request and the server's wait; ``transfer`` is receiving the rest of the body.
///
/// A phase whose end is `nil` or zero did not happen and has no duration: a reused connection has no lookup, connect
/// or handshake (libcurl reports them as zero), plain `http` has no handshake, a streamed response has no
/// ``/NetworkAgent/HTTPTransferTimings/total`` when its headers arrive. Leaving such a phase out, rather than counting
/// it as zero, keeps each histogram a distribution of the phase's real cost, and its count the number of times it
/// happened (new connections, handshakes). A phase that ends before an earlier one (an inconsistent report) counts
/// as zero, never as a negative duration.
public enum MetricsTransferPhase: String, CaseIterable, Hashable, Sendable {
    /// Resolving the host name: `dns`.
    case dns
    /// Establishing the TCP connection: `connect`.
    case connect
    /// The TLS handshake: `tls`.
    case tls
    /// Protocol negotiation after the connection is ready, until the request is about to be sent: `pretransfer`.
    case pretransfer
    /// Sending the request and waiting for the first byte of the response: `first_byte`.
    case firstByte = "first_byte"
    /// Receiving the response, from its first byte to the end of the transfer: `transfer`.
    case transfer

    /// Every phase in transfer order, without the allocation a call of `allCases` may make.
    static let inOrder: [MetricsTransferPhase] = allCases

    /// How long the phase took in a transfer.
    ///
    /// - Parameter timings: The transfer's cumulative timings.
    /// - Returns: The phase's duration (zero or more), or `nil` when the phase did not happen.
    public func duration(in timings: HTTPTransferTimings) -> Duration? {
        guard let end = Self.happened(end(in: timings)) else { return nil }
        var start = Duration.zero
        for earlier in Self.inOrder {
            guard earlier != self else { break }
            if let earlierEnd = Self.happened(earlier.end(in: timings)), earlierEnd > start { start = earlierEnd }
        }
        return end > start ? end - start : .zero
    }

    /// Calls `body` with the position in ``inOrder`` and the seconds of every phase that happened, in order: the
    /// same phases and values as ``duration(in:)`` of each phase, converted as ``MetricsMeasurement/seconds`` is.
    ///
    /// A finished request records all six: one pass carries the latest end so far, on the attoseconds, where
    /// ``duration(in:)`` of each phase goes over the earlier ones again with `Duration`'s comparisons (calls into
    /// the standard library).
    static func forEachDuration(in timings: HTTPTransferTimings, _ body: (Int, Double) -> Void) {
        // The start of the next phase: the latest end of the phases that happened so far, or zero.
        var start: Int128 = 0
        for (index, phase) in inOrder.enumerated() {
            guard let end = phase.end(in: timings)?.attoseconds, end > 0 else { continue }
            body(index, end > start ? Duration.seconds(attoseconds: end - start) : 0)
            if end > start { start = end }
        }
    }

    /// The cumulative time at which the phase ends.
    private func end(in timings: HTTPTransferTimings) -> Duration? {
        switch self {
        case .dns: timings.nameLookup
        case .connect: timings.connect
        case .tls: timings.tlsHandshake
        case .pretransfer: timings.preTransfer
        case .firstByte: timings.firstByte
        case .transfer: timings.total
        }
    }

    private static func happened(_ end: Duration?) -> Duration? {
        guard let end, end > .zero else { return nil }
        return end
    }
}
