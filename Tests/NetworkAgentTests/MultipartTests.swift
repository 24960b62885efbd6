import Foundation
import NetworkAgent
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct MultipartTests {
    func build(
        _ parts: [HTTPMultipartTask],
        threshold: Int = 1 << 20,
        headers: [String: String] = ["Content-Type": "multipart/form-data"]
    ) throws -> URLRequest {
        let agent = NetworkAgent(
            transport: URLSessionTransport.shared,
            configuration: .init(multipartMemoryThreshold: threshold)
        )
        return try agent.urlRequest(for: TestEndpoint(method: .post, headers: headers, task: .upload(parts: parts)))
    }

    func boundary(of request: URLRequest) throws -> String {
        let contentType = try #require(request.value(forHTTPHeaderField: "Content-Type"))
        let range = try #require(contentType.range(of: "; boundary="))
        return String(contentType[range.upperBound...])
    }

    // Deprecated because it exercises the seed spelling `mymetype:` (deprecated, renamed `mimeType:`) on purpose.
    @available(*, deprecated, message: "exercises the seed's deprecated `mymetype:` spelling")
    @Test func seedStyleBodyWithFieldAndFile() throws {
        let request = try build([
            HTTPMultipartTask(data: Data([0x89, 0x50]), name: "avatar", filename: "avatar.png", mymetype: "image/png"),
            HTTPMultipartTask(data: Data("public".utf8), name: "visibility"),
        ])
        let boundary = try boundary(of: request)
        #expect(boundary.hasPrefix("Boundary-"))
        #expect(request.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
        var expected = Data(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"avatar.png\"\r\n".utf8
        )
        expected += Data("Content-Type: image/png\r\n\r\n".utf8) + Data([0x89, 0x50]) + Data("\r\n".utf8)
        expected += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"visibility\"\r\n\r\npublic\r\n".utf8)
        expected += Data("--\(boundary)--\r\n".utf8)
        #expect(request.httpBody == expected)
    }

    @Test func boundaryIsFreshPerRequest() throws {
        let parts = [HTTPMultipartTask(data: Data("x".utf8), name: "a")]
        #expect(try boundary(of: build(parts)) != boundary(of: build(parts)))
    }

    @Test func jsonContentTypeBecomesMultipart() throws {
        let request = try build(
            [HTTPMultipartTask(data: Data(), name: "a")],
            headers: ["Content-Type": "application/json"]
        )
        #expect(request.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
    }

    @Test func namesAndFilenamesAreEscaped() throws {
        let request = try build([
            HTTPMultipartTask(
                data: Data(),
                name: "a\"b\r\nX-Injected: 1",
                filename: "f\"\n.txt",
                mimeType: "text/plain"
            )
        ])
        let body = String(decoding: try #require(request.httpBody), as: UTF8.self)
        #expect(body.contains("name=\"a%22b%0D%0AX-Injected: 1\"; filename=\"f%22%0A.txt\""))
        #expect(!body.contains("\r\nX-Injected"))
    }

    @Test func mimeTypeWithNewlineIsRefused() {
        #expect {
            try build([HTTPMultipartTask(data: Data(), name: "a", mimeType: "text/plain\r\nX: y")])
        } throws: { ($0 as? NetworkAgentError)?.code == .invalidHeader }
    }

    @Test func largeBodyGoesToATemporaryFileThatIsDeleted() throws {
        let payload = Data(repeating: 7, count: 4096)
        var fileURL: URL?
        do {
            let request = try build(
                [HTTPMultipartTask(data: payload, name: "blob", mimeType: "application/octet-stream")],
                threshold: 1024
            )
            #expect(request.httpBody == nil)
            let stream = try #require(request.httpBodyStream as? FileBackedBodyStream)
            fileURL = stream.fileURL
            let written = try Data(contentsOf: stream.fileURL)
            #expect(written.count > payload.count)
            #expect(written.range(of: payload) != nil)
        }
        #expect(!FileManager.default.fileExists(atPath: try #require(fileURL).path))
    }

    /// Found by the `requests` fuzz target (one boundary per Content-Type): a `boundary` the endpoint declared was kept next to the generated one,
    /// so the header named two boundaries and a receiver taking the first could not parse the body.
    @Test(arguments: [
        ("multipart/mixed; boundary=evil", "multipart/mixed"),
        ("multipart/mixed; charset=utf-8;BOUNDARY=\"a;b\" ; x=1", "multipart/mixed; charset=utf-8; x=1"),
        ("multipart/related; note=\"boundary=kept; too\"", "multipart/related; note=\"boundary=kept; too\""),
    ])
    func declaredBoundaryIsReplaced(declared: String, kept: String) throws {
        let request = try build(
            [HTTPMultipartTask(data: Data("x".utf8), name: "a")],
            headers: ["Content-Type": declared]
        )
        let body = String(decoding: try #require(request.httpBody), as: UTF8.self)
        let boundary = try #require(body.split(separator: "\r\n").first?.dropFirst(2))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "\(kept); boundary=\(boundary)")
    }

    /// The same property of the `requests` fuzz target: a parameter appended after an open quoted string is inside it.
    @Test func declaredTypeWithAnOpenQuoteKeepsOnlyItsMediaType() throws {
        let request = try build(
            [HTTPMultipartTask(data: Data(), name: "a")],
            headers: ["Content-Type": "multipart/mixed ; note=\"open; boundary=x"]
        )
        let boundary = try boundary(of: request)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "multipart/mixed; boundary=\(boundary)")
    }

    @Test func missingFileIsATypedError() {
        let part = HTTPMultipartTask(fileURL: URL(fileURLWithPath: "/nonexistent/file.bin"), name: "f")
        #expect { try build([part]) } throws: { ($0 as? NetworkAgentError)?.code == .encoding }
    }
}
