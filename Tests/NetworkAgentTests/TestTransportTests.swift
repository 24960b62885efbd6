import Foundation
import NetworkAgent
import NetworkAgentTestSupport
import Testing

/// The switch that picks the transport of a test run.
@Suite struct TestTransportTests {
    @Test func unsetOrEmptyMeansURLSession() throws {
        #expect(try TestTransport.Kind(environmentValue: nil) == .urlSession)
        #expect(try TestTransport.Kind(environmentValue: "") == .urlSession)
    }

    @Test func eachKindIsNamedByItsRawValue() throws {
        #expect(try TestTransport.Kind(environmentValue: "urlsession") == .urlSession)
        #expect(try TestTransport.Kind(environmentValue: "curl") == .curl)
    }

    @Test(arguments: ["Curl", "libcurl", "url-session", " curl"])
    func anUnknownValueIsAnErrorNotAFallback(value: String) {
        #expect(throws: TestTransport.UnknownKind(value: value)) { try TestTransport.Kind(environmentValue: value) }
    }

    @Test func theTransportsMadeAreOfTheRunsKind() {
        let transport = TestTransport.make()
        switch TestTransport.kind {
        case .urlSession:
            #expect(transport is URLSessionTransport)
            #expect(TestTransport.activeTransfers(of: transport) == 0)
        case .curl:
            #expect(String(describing: type(of: transport)) == "CurlTransport")
        }
    }
}
