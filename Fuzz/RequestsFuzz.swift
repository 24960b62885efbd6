// libFuzzer entry point for the core's request building: `NetworkAgent(transport:).urlRequest(for:)`.
//
// Not part of the package: Scripts/fuzz compiles this file and Fuzz/Support/FuzzInput.swift against the core, built
// with the same sanitizer flags. Each input describes an endpoint — base URL text, path text, header names and
// values, and a task: query or form attributes with nested arrays and dictionaries, JSON attributes, a raw body, or
// multipart parts whose names, file names and MIME types carry quotes, CR, LF, NUL and text decoded from invalid
// UTF-8. The endpoint is built with its task, built again, and built with `.requestPlain` instead. Properties:
//
// 1. building returns a request or throws NetworkAgentError, nothing else, and never sends anything;
// 2. a header that is not an RFC 9110 token or whose value has CR, LF or NUL fails the build (`invalidHeader`),
//    and a valid endpoint builds: the task adds only the failures it can cause (a body on GET/HEAD, JSON the
//    encoder refuses, an unreadable multipart file, an invalid part MIME type) — a query never makes it fail;
// 3. no header name or value of a built request contains CR, LF or NUL, and the endpoint's headers are kept;
// 4. a query is appended to the base URL's own query exactly as HTTPURLEncoding documents (percent-encoded,
//    arrays repeated, dictionaries in brackets), with its keys sorted; a form body is the same encoding;
// 5. a multipart body parses back by its boundary into the parts, in order, each part's header block being
//    exactly the expected lines (names and file names escaped, no CR or LF but the framing), its bytes intact;
// 6. building twice gives the same URL;
// 7. the temporary file of a streamed multipart body is gone once no request holds it.
//
// A failed property stops the run with fatalError, which libFuzzer reports as a crash with the input saved.
import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs one input; libFuzzer calls it by its C name. Always returns 0 (the input is usable).
@_cdecl("LLVMFuzzerTestOneInput")
public func requestsFuzzTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let data = bytes.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    var input = FuzzInput(data)
    if let fuzzCase = FuzzCase(&input) {
        check(fuzzCase)
        if fuzzCase.streamsMultipart {
            checkTemporaryFilesDeleted(fuzzCase)
        }
    }
    return 0
}

// MARK: - The endpoint

/// A transport that fails the run if anything is ever sent: building a request must not send it.
struct NeverSendingTransport: HTTPTransport {
    func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        fatalError("building a request sent it: \(request)")
    }
}

let agent = NetworkAgent(transport: NeverSendingTransport())
/// Where the streaming agent writes its temporary files: a directory of this process, removed at exit, that must be
/// empty again whenever no request is alive.
let streamingDirectory: URL = {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("networkagent-requests-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(at: streamingDirectory) }
    return directory
}()

/// Writes every multipart body to a temporary file, so the streamed path is checked too.
let streamingAgent = NetworkAgent(
    transport: NeverSendingTransport(),
    configuration: NetworkAgentConfiguration(multipartMemoryThreshold: 0, temporaryDirectory: streamingDirectory)
)

struct FuzzEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path: String
    var method: HTTPMethod
    var headers: [String: String]
    var task: HTTPTask
}

/// An attribute value as generated, so that the expected encoding is computed from what was meant, not from what
/// the core's casts make of it.
indirect enum Attribute {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case missing
    case present(Int)
    case array([Attribute])
    case dictionary([String: Attribute])

    /// The value handed to the core.
    var value: any Sendable {
        switch self {
        case .string(let text): return text
        case .int(let number): return number
        case .double(let number): return number
        case .bool(let flag): return flag
        case .date(let date): return date
        case .missing: return Int?.none as any Sendable
        case .present(let number): return Int?.some(number) as any Sendable
        case .array(let items): return items.map(\.value)
        case .dictionary(let fields): return fields.mapValues(\.value)
        }
    }

    /// Whether `JSONSerialization` is certain to accept the value.
    var isPlainJSON: Bool {
        switch self {
        case .string, .int, .bool: true
        case .double(let number): number.isFinite
        case .date, .missing, .present: false
        case .array(let items): items.allSatisfy(\.isPlainJSON)
        case .dictionary(let fields): fields.values.allSatisfy(\.isPlainJSON)
        }
    }

    static func make(_ input: inout FuzzInput, depth: Int) -> Attribute {
        switch input.int(below: depth > 0 ? 9 : 7) {
        case 0: .string(input.text(upTo: 12))
        case 1: .int(input.bool() ? Int(Int8(bitPattern: input.byte())) : Int(truncatingIfNeeded: input.uint64()))
        case 2: .double(input.bool() ? Double(input.byte()) / 8 : Double(bitPattern: input.uint64()))
        case 3: .bool(input.bool())
        case 4: .date(Date(timeIntervalSince1970: Double(input.byte()) * 1e6))
        case 5: .missing
        case 6: .present(Int(input.byte()))
        case 7: .array((0..<input.int(below: 4)).map { _ in make(&input, depth: depth - 1) })
        default: .dictionary(makeFields(&input, depth: depth - 1))
        }
    }

    static func makeFields(_ input: inout FuzzInput, depth: Int) -> [String: Attribute] {
        var fields: [String: Attribute] = [:]
        for _ in 0..<input.int(below: 5) {
            fields[input.text(upTo: 6)] = make(&input, depth: depth)
        }
        return fields
    }
}

/// The JSON body of `requestWithoutAttributes` with an `Encodable` value.
struct Payload: Codable, Equatable {
    var name: String
    var value: Double
    var tags: [String]
}

/// Content that is neither `Encodable`, `Data` nor `String`: the build must refuse it.
struct UnsupportedContent: Sendable {}

enum TaskKind: CaseIterable {
    case plain, query, form, json, data, text, encodable, unsupported, upload

    var hasBody: Bool {
        switch self {
        case .plain, .query: false
        default: true
        }
    }
}

struct FuzzCase {
    var endpoint: FuzzEndpoint
    var kind: TaskKind
    var attributes: [String: Attribute] = [:]
    var body = Data()
    var text = ""
    var payload = Payload(name: "", value: 0, tags: [])
    var parts: [HTTPMultipartTask] = []
    var streamsMultipart = false

    static let bases = [
        "https://example.com", "https://example.com/api", "http://example.com:8080/a/b/",
        "https://example.com/api?fixed=1&b=%20", "https://example.com/?", "HTTPS://Example.COM./x#frag",
        "file:///tmp/x", "example.com/relative", "https://[::1]:8443/v1", "http://user:pw@host/p%20q/",
    ]
    static let schemes = ["https://", "http://", "", "https://example.com/", "ftp://", "mailto:"]
    static let headerNames = ["Content-Type", "content-type", "Accept", "X-Trace", "Authorization", "User-Agent"]
    static let mimeTypes = ["image/png", "text/plain; charset=utf-8", "application/octet-stream", ""]

    /// The case an input describes, or `nil` when its base URL text is not a URL at all.
    init?(_ input: inout FuzzInput) {
        let method = input.pick(HTTPMethod.allCases)
        let baseURL: URL?
        switch input.int(below: 4) {
        case 0, 1: baseURL = URL(string: input.pick(Self.bases))
        case 2: baseURL = URL(string: input.pick(Self.schemes) + input.text(upTo: 24))
        default: baseURL = URL(string: input.text(upTo: 16), relativeTo: URL(string: "https://example.com/root/"))
        }
        guard let baseURL else { return nil }
        let path = input.text(upTo: 24)
        var headers: [String: String] = [:]
        for _ in 0..<input.int(below: 5) {
            let name = input.bool() ? input.pick(Self.headerNames) : input.text(upTo: 8)
            headers[name] = input.text(upTo: 24)
        }
        kind = input.pick(TaskKind.allCases)
        let task: HTTPTask
        switch kind {
        case .plain:
            task = .requestPlain
        case .query, .form, .json:
            attributes = Attribute.makeFields(&input, depth: 3)
            let encoding: HTTPURLEncoding = kind == .query ? .url : kind == .form ? .form : .json
            task = .requestAttributes(attributes: attributes.mapValues(\.value), encoding: encoding)
        case .data:
            body = Data(input.bytes(upTo: 64))
            task = .requestWithoutAttributes(content: body)
        case .text:
            text = input.text(upTo: 32)
            task = .requestWithoutAttributes(content: text)
        case .encodable:
            payload = Payload(
                name: input.text(upTo: 12),
                value: input.bool() ? Double(input.byte()) : Double(bitPattern: input.uint64()),
                tags: (0..<input.int(below: 3)).map { _ in input.text(upTo: 6) }
            )
            task = .requestWithoutAttributes(content: payload)
        case .unsupported:
            task = .requestWithoutAttributes(content: UnsupportedContent())
        case .upload:
            streamsMultipart = input.int(below: 8) == 0
            for _ in 0..<input.int(below: 4) {
                let name = input.text(upTo: 12)
                let filename: String? = input.bool() ? input.text(upTo: 12) : nil
                let mimeType: String? =
                    switch input.int(below: 3) {
                    case 0: nil
                    case 1: input.pick(Self.mimeTypes)
                    default: input.text(upTo: 12)
                    }
                if input.int(below: 16) == 0 {
                    let missing = URL(fileURLWithPath: "/nonexistent/networkagent-fuzz/\(parts.count)")
                    parts.append(HTTPMultipartTask(content: .file(missing), name: name, mimeType: mimeType))
                } else {
                    let data = Data(input.bytes(upTo: 48))
                    parts.append(HTTPMultipartTask(data: data, name: name, filename: filename, mimeType: mimeType))
                }
            }
            task = .upload(parts: parts)
        }
        endpoint = FuzzEndpoint(baseURL: baseURL, path: path, method: method, headers: headers, task: task)
    }

    /// The failures the task may add to an endpoint that builds plain, and whether one of them is certain.
    var taskFailures: (allowed: Set<NetworkAgentError.Code>, certain: Bool) {
        var allowed: Set<NetworkAgentError.Code> = []
        var certain = false
        if kind.hasBody, endpoint.method == .get || endpoint.method == .head {
            allowed.insert(.encoding)
            certain = true
        }
        switch kind {
        case .plain, .query, .form, .data, .text:
            break
        case .json:
            if !attributes.values.allSatisfy(\.isPlainJSON) { allowed.insert(.encoding) }
        case .encodable:
            if !payload.value.isFinite {
                allowed.insert(.encoding)
                certain = true
            }
        case .unsupported:
            allowed.insert(.encoding)
            certain = true
        case .upload:
            if parts.contains(where: { $0.mimeType.map { !isValidHeaderValue($0) } ?? false }) {
                allowed.insert(.invalidHeader)
                certain = true
            }
            if parts.contains(where: { if case .file = $0.content { true } else { false } }) {
                allowed.insert(.encoding)
                certain = true
            }
        }
        return (allowed, certain)
    }
}

// MARK: - Checks

enum Outcome {
    case request(URLRequest)
    case failure(NetworkAgentError)
}

func build(_ endpoint: FuzzEndpoint, with agent: NetworkAgent) -> Outcome {
    do {
        return .request(try agent.urlRequest(for: endpoint))
    } catch let error as NetworkAgentError {
        return .failure(error)
    } catch {
        fatalError("urlRequest(for:) threw \(type(of: error)), not NetworkAgentError: \(error)")
    }
}

func check(_ fuzzCase: FuzzCase) {
    let endpoint = fuzzCase.endpoint
    let builder = fuzzCase.streamsMultipart ? streamingAgent : agent
    var plainEndpoint = endpoint
    plainEndpoint.task = .requestPlain
    let plain = build(plainEndpoint, with: builder)
    let outcome = build(endpoint, with: builder)
    let headersValid = endpoint.headers.allSatisfy { isToken($0.key) && isValidHeaderValue($0.value) }

    switch (plain, outcome) {
    case (.failure(let plainError), .failure(let error)):
        guard plainError.code == error.code else {
            fail(fuzzCase, "the plain build failed with \(plainError), the task's build with \(error)")
        }
        if plainError.code == .invalidHeader, headersValid {
            fail(fuzzCase, "valid headers were refused: \(plainError)")
        }
    case (.failure(let plainError), .request):
        fail(fuzzCase, "the plain build failed with \(plainError) but the task's build succeeded")
    case (.request(let plainRequest), .failure(let error)):
        checkPlain(plainRequest, fuzzCase, headersValid: headersValid)
        guard fuzzCase.taskFailures.allowed.contains(error.code) else {
            fail(fuzzCase, "the task made a buildable endpoint fail: \(error)")
        }
    case (.request(let plainRequest), .request(let request)):
        checkPlain(plainRequest, fuzzCase, headersValid: headersValid)
        if fuzzCase.taskFailures.certain {
            fail(fuzzCase, "the build succeeded although the task cannot be encoded")
        }
        checkHeaders(request, fuzzCase)
        checkTask(request, plain: plainRequest, fuzzCase)
        if case .request(let again) = build(endpoint, with: builder) {
            guard again.url == request.url else {
                fail(fuzzCase, "building twice gave \(describe(request.url)) and \(describe(again.url))")
            }
        } else {
            fail(fuzzCase, "building a second time failed")
        }
    }
}

/// The plain build succeeded: the endpoint's headers were all valid, and they are all on the request.
func checkPlain(_ request: URLRequest, _ fuzzCase: FuzzCase, headersValid: Bool) {
    guard headersValid else { fail(fuzzCase, "an invalid header was accepted: \(request.allHTTPHeaderFields ?? [:])") }
    guard request.url != nil else { fail(fuzzCase, "a built request has no URL") }
    checkHeaders(request, fuzzCase)
}

func checkHeaders(_ request: URLRequest, _ fuzzCase: FuzzCase) {
    guard request.httpMethod == fuzzCase.endpoint.method.name else {
        fail(fuzzCase, "the method is \(request.httpMethod ?? "nil")")
    }
    let fields = request.allHTTPHeaderFields ?? [:]
    for (name, value) in fields where !isToken(name) || !isValidHeaderValue(value) {
        fail(fuzzCase, "the request carries header \(name.debugDescription): \(value.debugDescription)")
    }
    // Names that differ only in case collide on the request; which one wins is the dictionary's order.
    let endpointHeaders = fuzzCase.endpoint.headers
    for (name, value) in endpointHeaders {
        let collides = endpointHeaders.keys.contains { $0 != name && $0.lowercased() == name.lowercased() }
        if collides || name.lowercased() == "content-type" { continue }
        guard request.value(forHTTPHeaderField: name) == value else {
            fail(fuzzCase, "header \(name) is \(request.value(forHTTPHeaderField: name).debugDescription)")
        }
    }
}

func checkTask(_ request: URLRequest, plain: URLRequest, _ fuzzCase: FuzzCase) {
    if fuzzCase.kind != .query, request.url != plain.url {
        fail(fuzzCase, "the task changed the URL to \(describe(request.url))")
    }
    switch fuzzCase.kind {
    case .plain:
        if request.httpBody != nil || request.httpBodyStream != nil { fail(fuzzCase, "a plain request has a body") }
    case .query:
        checkQuery(request, plain: plain, fuzzCase)
    case .form:
        let expected = Data(QueryReference.encode(fuzzCase.attributes).utf8)
        guard request.httpBody == expected else {
            fail(fuzzCase, "the form body is \(String(decoding: request.httpBody ?? Data(), as: UTF8.self))")
        }
    case .json:
        guard let body = request.httpBody,
            (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] != nil
        else { fail(fuzzCase, "the JSON body is not a JSON object") }
    case .data:
        guard request.httpBody == fuzzCase.body else { fail(fuzzCase, "the raw body changed") }
    case .text:
        guard request.httpBody == Data(fuzzCase.text.utf8) else { fail(fuzzCase, "the text body changed") }
    case .encodable:
        guard let body = request.httpBody, (try? JSONDecoder().decode(Payload.self, from: body)) == fuzzCase.payload
        else { fail(fuzzCase, "the Encodable body does not decode to the value") }
    case .unsupported:
        fail(fuzzCase, "unsupported content was encoded")
    case .upload:
        checkMultipart(request, fuzzCase)
    }
}

// MARK: - Queries

/// The encoding HTTPURLEncoding documents, written from its rules rather than from the core's code.
enum QueryReference {
    static func pairs(_ attributes: [String: Attribute]) -> [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = []
        for key in attributes.keys.sorted() {
            if let value = attributes[key] { flatten(value, key: key, into: &pairs) }
        }
        return pairs
    }

    static func flatten(_ attribute: Attribute, key: String, into pairs: inout [(key: String, value: String)]) {
        switch attribute {
        case .missing: break
        case .present(let number): pairs.append((key, "\(number)"))
        case .string(let text): pairs.append((key, text))
        case .int(let number): pairs.append((key, "\(number)"))
        case .double(let number): pairs.append((key, "\(number)"))
        case .bool(let flag): pairs.append((key, flag ? "true" : "false"))
        case .date(let date): pairs.append((key, "\(date)"))
        case .array(let items):
            for item in items { flatten(item, key: key, into: &pairs) }
        case .dictionary(let fields):
            for subkey in fields.keys.sorted() {
                if let value = fields[subkey] { flatten(value, key: "\(key)[\(subkey)]", into: &pairs) }
            }
        }
    }

    static func encode(_ attributes: [String: Attribute]) -> String {
        pairs(attributes).map { percentEncode($0.key) + "=" + percentEncode($0.value) }.joined(separator: "&")
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    static func percentEncode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            if isUnreserved(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return encoded
    }

    /// The bytes of a percent-encoded component, or `nil` if it has anything but unreserved characters and escapes.
    static func percentDecode(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                return nil
            }
        }
        return bytes
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}

func checkQuery(_ request: URLRequest, plain: URLRequest, _ fuzzCase: FuzzCase) {
    guard let url = request.url, let plainURL = plain.url,
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
        let plainComponents = URLComponents(url: plainURL, resolvingAgainstBaseURL: true)
    else { fail(fuzzCase, "the query request's URL does not parse") }
    let reference = QueryReference.encode(fuzzCase.attributes)
    if reference.isEmpty {
        guard url == plainURL else { fail(fuzzCase, "empty attributes changed the URL to \(url.absoluteString)") }
        return
    }
    guard components.percentEncodedPath == plainComponents.percentEncodedPath,
        components.host == plainComponents.host, components.scheme == plainComponents.scheme
    else { fail(fuzzCase, "the query changed more than the query: \(url.absoluteString)") }
    let existing = plainComponents.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
    guard let query = components.percentEncodedQuery, query.hasPrefix(existing) else {
        fail(fuzzCase, "the base URL's query was not kept: \(url.absoluteString)")
    }

    // Parse the appended pairs back: every byte is unreserved or escaped, and they decode to the attributes.
    let expected = QueryReference.pairs(fuzzCase.attributes)
    let appended = query.dropFirst(existing.count).split(separator: "&", omittingEmptySubsequences: false)
    guard appended.count == expected.count else {
        fail(fuzzCase, "\(appended.count) query pairs for \(expected.count) values: \(query)")
    }
    var decodedKeys: [[UInt8]] = []
    for (pair, want) in zip(appended, expected) {
        let sides = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard sides.count == 2, let key = QueryReference.percentDecode(sides[0]),
            let value = QueryReference.percentDecode(sides[1])
        else { fail(fuzzCase, "query pair \(pair) is not percent-encoded key=value") }
        guard key == Array(want.key.utf8), value == Array(want.value.utf8) else {
            fail(fuzzCase, "query pair \(pair) should be \(want.key.debugDescription)=\(want.value.debugDescription)")
        }
        decodedKeys.append(key)
    }
    checkKeysSorted(decodedKeys, fuzzCase)
    guard query == existing + reference else { fail(fuzzCase, "the query is \(query), expected \(reference)") }
}

/// The top-level key each pair belongs to appears in sorted order: matching the pairs, in order, against the sorted
/// keys (each pair is the key itself or the key followed by `[`) never has to go back.
func checkKeysSorted(_ keys: [[UInt8]], _ fuzzCase: FuzzCase) {
    let topLevel = fuzzCase.attributes.keys.sorted().map { Array($0.utf8) }
    var position = 0
    for key in keys {
        while position < topLevel.count {
            let candidate = topLevel[position]
            if key == candidate || key.starts(with: candidate + [UInt8(ascii: "[")]) { break }
            position += 1
        }
        guard position < topLevel.count else {
            fail(fuzzCase, "query keys are not sorted: \(keys.map { String(decoding: $0, as: UTF8.self) })")
        }
    }
}

// MARK: - Multipart

func checkMultipart(_ request: URLRequest, _ fuzzCase: FuzzCase) {
    // The Content-Type names exactly one boundary, outside any quoted string: the one the body uses.
    guard let contentType = request.value(forHTTPHeaderField: "Content-Type"),
        contentType.lowercased().hasPrefix("multipart/"),
        let parameters = parameters(of: contentType)
    else { fail(fuzzCase, "the multipart Content-Type is unusable: \(request.allHTTPHeaderFields ?? [:])") }
    let boundaries = parameters.compactMap { parameter -> Substring? in
        let trimmed = parameter.drop { $0 == " " || $0 == "\t" }
        return trimmed.lowercased().hasPrefix("boundary=") ? trimmed.dropFirst("boundary=".count) : nil
    }
    guard boundaries.count == 1, let boundaryText = boundaries.first else {
        fail(fuzzCase, "the multipart Content-Type has \(boundaries.count) boundaries: \(contentType)")
    }
    let boundary = Array(boundaryText.utf8)
    guard !boundary.isEmpty, boundary.allSatisfy({ QueryReference.isUnreserved($0) }) else {
        fail(fuzzCase, "the boundary \(contentType) is not a plain token")
    }
    let body: Data
    if let stream = request.httpBodyStream {
        guard let file = stream as? FileBackedBodyStream,
            let contents = FileManager.default.contents(atPath: file.fileURL.path)
        else { fail(fuzzCase, "the streamed multipart body cannot be read") }
        body = contents
    } else {
        body = request.httpBody ?? Data()
    }
    let bytes = [UInt8](body)
    var offset = 0
    let crlf: [UInt8] = [13, 10]
    let dashes = Array("--".utf8)

    func expect(_ literal: [UInt8], _ what: String) {
        guard bytes.count - offset >= literal.count, Array(bytes[offset..<offset + literal.count]) == literal else {
            fail(fuzzCase, "the multipart body lacks \(what) at byte \(offset)")
        }
        offset += literal.count
    }

    for (index, part) in fuzzCase.parts.enumerated() {
        expect(dashes + boundary + crlf, "the delimiter of part \(index)")
        guard let end = find(crlf + crlf, in: bytes, from: offset) else {
            fail(fuzzCase, "part \(index) has no blank line after its headers")
        }
        let lines = split(Array(bytes[offset..<end]), separator: crlf)
        let expected = expectedHeaderLines(for: part).map { Array($0.utf8) }
        for line in lines where line.contains(13) || line.contains(10) {
            fail(fuzzCase, "a header line of part \(index) has CR or LF: \(String(decoding: line, as: UTF8.self))")
        }
        guard lines == expected else {
            fail(
                fuzzCase,
                "part \(index) has header lines \(lines.map { String(decoding: $0, as: UTF8.self).debugDescription })"
            )
        }
        offset = end + 4
        expect([UInt8](part.data), "the bytes of part \(index)")
        expect(crlf, "the line break after part \(index)")
    }
    expect(dashes + boundary + dashes + crlf, "the close delimiter")
    guard offset == bytes.count else { fail(fuzzCase, "\(bytes.count - offset) bytes follow the close delimiter") }
}

/// The parameters of a header value (what follows its first semicolon), split at semicolons outside quoted
/// strings; `nil` when a quoted string is left open.
func parameters(of value: String) -> [Substring]? {
    var pieces: [Substring] = []
    var start = value.utf8.startIndex
    var inQuotes = false
    var escaped = false
    for index in value.utf8.indices {
        let byte = value.utf8[index]
        if escaped {
            escaped = false
        } else if inQuotes, byte == UInt8(ascii: "\\") {
            escaped = true
        } else if byte == UInt8(ascii: "\"") {
            inQuotes.toggle()
        } else if byte == UInt8(ascii: ";"), !inQuotes {
            pieces.append(Substring(value.utf8[start..<index]))
            start = value.utf8.index(after: index)
        }
    }
    guard !inQuotes else { return nil }
    pieces.append(Substring(value.utf8[start...]))
    return Array(pieces.dropFirst())
}

/// Every request is gone: so must be the temporary files of their streamed bodies.
func checkTemporaryFilesDeleted(_ fuzzCase: FuzzCase) {
    let left = (try? FileManager.default.contentsOfDirectory(atPath: streamingDirectory.path)) ?? []
    guard left.isEmpty else {
        fail(fuzzCase, "temporary multipart files outlived their requests: \(left)")
    }
}

/// The header lines of a part, escaped as the HTML standard's multipart/form-data encoding says.
func expectedHeaderLines(for part: HTTPMultipartTask) -> [String] {
    func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
    var disposition = "Content-Disposition: form-data; name=\"\(escape(part.name))\""
    guard let mimeType = part.mimeType else { return [disposition] }
    disposition += "; filename=\"\(escape(part.filename))\""
    return [disposition, "Content-Type: \(mimeType)"]
}

func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    var index = start
    while index + needle.count <= haystack.count {
        if haystack[index..<index + needle.count].elementsEqual(needle) { return index }
        index += 1
    }
    return nil
}

func split(_ bytes: [UInt8], separator: [UInt8]) -> [[UInt8]] {
    var lines: [[UInt8]] = []
    var start = 0
    while let end = find(separator, in: bytes, from: start) {
        lines.append(Array(bytes[start..<end]))
        start = end + separator.count
    }
    lines.append(Array(bytes[start...]))
    return lines
}

// MARK: - Helpers

/// RFC 9110 `token`, written out here rather than taken from the core.
func isToken(_ name: String) -> Bool {
    !name.isEmpty
        && name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
        }
}

func isValidHeaderValue(_ value: String) -> Bool {
    !value.unicodeScalars.contains { $0 == "\r" || $0 == "\n" || $0 == "\0" }
}

func describe(_ url: URL?) -> String {
    url?.absoluteString ?? "nil"
}

func fail(_ fuzzCase: FuzzCase, _ message: String) -> Never {
    fatalError("\(message)\n\(describe(fuzzCase))")
}

func describe(_ fuzzCase: FuzzCase) -> String {
    let endpoint = fuzzCase.endpoint
    return """
          base URL: \(endpoint.baseURL.absoluteString.debugDescription)
          path: \(endpoint.path.debugDescription)
          method: \(endpoint.method.name)
          headers: \(endpoint.headers)
          task: \(fuzzCase.kind) \(fuzzCase.attributes) \(fuzzCase.parts)
        """
}
