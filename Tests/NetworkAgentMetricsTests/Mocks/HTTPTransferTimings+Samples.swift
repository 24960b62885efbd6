import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPTransferTimings {
    /// A new TLS connection: lookup 2 ms, connect +3 ms, handshake +10 ms, pre-transfer +0.2 ms, first byte +40 ms,
    /// body +5 ms.
    static let newTLSConnection = HTTPTransferTimings(
        nameLookup: .milliseconds(2),
        connect: .milliseconds(5),
        tlsHandshake: .milliseconds(15),
        preTransfer: .microseconds(15_200),
        firstByte: .microseconds(55_200),
        total: .microseconds(60_200)
    )

    /// A reused connection as libcurl reports it: lookup, connect and handshake zero.
    static let reusedConnection = HTTPTransferTimings(
        nameLookup: .zero,
        connect: .zero,
        tlsHandshake: .zero,
        preTransfer: .microseconds(50),
        firstByte: .microseconds(3_050),
        total: .microseconds(3_100)
    )
}
