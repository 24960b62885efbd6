// The seed README's examples, kept as written there (only `baseURL` points at a loopback server, the print calls go
// to a log, and each provider is given the agent of this run's transport), compiled against the core and run over
// real HTTP.
import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where the seed `Api` points during a test.
enum SeedServer {
    @TaskLocal static var baseURL = URL(string: "https://example.com/api")!
    static let log = HookLog()
}

enum Api {
    case login(email: String, password: String)
    case books(query: [String: any Sendable])
    case book(id: Int)
    case refresh
    case uploadAvatar(Data)
}

extension Api: NetworkAgentEndpoint {
    var baseURL: URL { SeedServer.baseURL }

    var path: String {
        switch self {
        case .login: return "/login"
        case .books: return "/books"
        case let .book(id): return "/books/\(id)"
        case .refresh: return "/refresh"
        case .uploadAvatar: return "/avatar"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .login, .refresh, .uploadAvatar: return .post
        case .books, .book: return .get
        }
    }

    // Deprecated because the seed spelling `mymetype:` below is: a deprecated declaration may use deprecated API
    // without a warning, and the provider reaches this witness through `NetworkAgentEndpoint`, which is not.
    @available(*, deprecated, message: "the seed README's multipart spelling, kept as written")
    var task: HTTPTask {
        switch self {
        case let .login(email, password):
            return .requestAttributes(
                attributes: ["email": email, "password": password],
                encoding: .json
            )
        case let .books(query):
            return .requestAttributes(attributes: query, encoding: .url)
        case .book, .refresh:
            return .requestPlain
        case let .uploadAvatar(image):
            return .upload(parts: [
                HTTPMultipartTask(
                    data: image,
                    name: "avatar",
                    filename: "avatar.png",
                    mymetype: "image/png"
                ),
                HTTPMultipartTask(
                    data: Data("public".utf8),
                    name: "visibility"
                ),
            ])
        }
    }

    var headers: [String: String] {
        if case .uploadAvatar = self { return ["Content-Type": "multipart/form-data"] }
        return ["Content-Type": "application/json", "Accept": "application/json"]
    }
}

struct Session: Decodable { let token: String }
struct Book: Decodable, Equatable { let id: Int; let title: String }
struct TokenResponse: Decodable {
    let accessToken: String
    enum CodingKeys: String, CodingKey { case accessToken = "access_token" }
}

final class BooksRepository: Sendable {
    private let provider: NetworkAgentProvider<Api>

    init(provider: NetworkAgentProvider<Api>) {
        self.provider = provider
    }

    func login(email: String, password: String) async throws -> Session {
        let (data, _) = try await provider.request(
            endpoint: .login(email: email, password: password)
        )
        return try Self.decoder.decode(Session.self, from: data)
    }

    func books(query: [String: any Sendable]) async throws -> [Book] {
        let (data, response) = try await provider.request(endpoint: .books(query: query))

        // You can branch on status code before decoding.
        if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
            throw URLError(.badServerResponse)
        }

        return try Self.decoder.decode([Book].self, from: data)
    }

    func book(id: Int) async throws -> Book {
        let (data, _) = try await provider.request(endpoint: .book(id: id))
        return try Self.decoder.decode(Book.self, from: data)
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()
}

struct AgentLogger: NetworkAgentPlugin {
    func onRequest(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint
    ) async throws -> URLRequest {
        SeedServer.log.add("→ \(request.httpMethod ?? "?") \(request.url?.absoluteString ?? "")")
        return request
    }

    func onResponse(
        _ response: URLResponse,
        data: Data,
        request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent
    ) async throws -> (data: Data, response: URLResponse) {
        if let http = response as? HTTPURLResponse {
            SeedServer.log.add("← \(http.statusCode) \(request.url?.absoluteString ?? "")")
        }
        return (data: data, response: response)
    }
}

struct AuthHeaderInjector: NetworkAgentPlugin {
    let token: @Sendable () async -> String?

    func onRequest(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint
    ) async throws -> URLRequest {
        guard let token = await token() else { return request }
        var mutated = request
        mutated.addValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return mutated
    }
}

actor TokenStore {
    private(set) var accessToken: String?
    func update(_ token: String) { accessToken = token }
}

struct TokenRefresher: NetworkAgentPlugin {
    let store: TokenStore

    func onResponse(
        _ response: URLResponse,
        data: Data,
        request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent
    ) async throws -> (data: Data, response: URLResponse) {
        guard
            let http = response as? HTTPURLResponse,
            http.statusCode == 401
        else {
            return (data: data, response: response)
        }

        // Side-request #1: refresh the token. No plugin chain re-entry.
        let (refreshData, _) = try await agent.request(Api.refresh)
        let refreshed = try JSONDecoder().decode(TokenResponse.self, from: refreshData)
        await store.update(refreshed.accessToken)

        // Side-request #2: retry the final request with the new token.
        var retry = request
        retry.setValue("Bearer \(refreshed.accessToken)", forHTTPHeaderField: "Authorization")
        return try await agent.send(retry)
    }
}

/// The seed's refresher exactly as written there: it retries by endpoint, so the retry skips the chain and
/// carries none of the headers plugins added (the gotcha the seed documents).
struct SeedTokenRefresher: NetworkAgentPlugin {
    let store: TokenStore

    func onResponse(
        _ response: URLResponse,
        data: Data,
        request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent
    ) async throws -> (data: Data, response: URLResponse) {
        guard
            let http = response as? HTTPURLResponse,
            http.statusCode == 401
        else {
            return (data: data, response: response)
        }

        let (refreshData, _) = try await agent.request(Api.refresh)
        let refreshed = try JSONDecoder().decode(TokenResponse.self, from: refreshData)
        await store.update(refreshed.accessToken)

        return try await agent.request(endpoint)
    }
}

/// A tiny books API: tokens "t1" (stale) and "t2" (after /refresh).
func booksServer() throws -> LoopbackServer {
    try LoopbackServer { request in
        switch (request.method, request.path) {
        case ("POST", "/api/login"):
            let body = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: String]
            return body?["password"] == "pw" ? .json(Data(#"{"token":"t1"}"#.utf8)) : .text("no", status: 403)
        case ("POST", "/api/refresh"):
            return .json(Data(#"{"access_token":"t2"}"#.utf8))
        case ("POST", "/api/avatar"):
            return .text(request.header("Content-Type") ?? "", headers: [("X-Body-Bytes", "\(request.body.count)")])
        case (_, _) where request.header("Authorization") != "Bearer t2":
            return .text("expired", status: 401, headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        case ("GET", "/api/books"):
            let limit = Int(request.queryItems.first { $0.name == "limit" }?.value ?? "") ?? 0
            let books = (1...max(limit, 1)).map { #"{"id":\#($0),"title":"Book \#($0)"}"# }
            return .json(Data("[\(books.joined(separator: ","))]".utf8))
        case ("GET", let path) where path.hasPrefix("/api/books/"):
            return .json(Data(#"{"id":\#(path.dropFirst(11)),"title":"One"}"#.utf8))
        default:
            return .text("not found", status: 404)
        }
    }
}

@Suite(.serialized) struct SeedContractTests {
    @Test func quickStartShape() async throws {
        let server = try booksServer()
        try await SeedServer.$baseURL.withValue(server.baseURL.appendingPathComponent("api")) {
            let provider = NetworkAgentProvider<Api>(agent: TestTransport.agent())
            let (data, response) = try await provider.request(endpoint: .login(email: "a@b.c", password: "pw"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(try JSONDecoder().decode(Session.self, from: data).token == "t1")
            let sent = try #require(server.requests.first)
            #expect(sent.header("Content-Type") == "application/json")
            #expect(sent.header("Accept") == "application/json")
            #expect(sent.body == Data(#"{"email":"a@b.c","password":"pw"}"#.utf8))
        }
    }

    @Test func repositoryWithLoggerInjectorAndRefresher() async throws {
        let server = try booksServer()
        try await SeedServer.$baseURL.withValue(server.baseURL.appendingPathComponent("api")) {
            let tokenStore = TokenStore()
            await tokenStore.update("t1")
            let provider = NetworkAgentProvider<Api>(
                plugins: [
                    AuthHeaderInjector(token: { await tokenStore.accessToken }),
                    AgentLogger(),
                    TokenRefresher(store: tokenStore),
                ],
                agent: TestTransport.agent()
            )
            let repository = BooksRepository(provider: provider)
            let books = try await repository.books(query: ["limit": 2, "offset": 0])
            #expect(books == [Book(id: 1, title: "Book 1"), Book(id: 2, title: "Book 2")])
            #expect(await tokenStore.accessToken == "t2")
            #expect(server.requests.map(\.path) == ["/api/books", "/api/refresh", "/api/books"])
            #expect(server.requests[2].target == "/api/books?limit=2&offset=0")
            #expect(server.requests[2].header("Authorization") == "Bearer t2")
            #expect(server.requests[1].header("Authorization") == nil)
            let logged = SeedServer.log.all
            #expect(logged.contains("→ GET \(server.baseURL.absoluteString)/api/books?limit=2&offset=0"))
            #expect(logged.contains("← 401 \(server.baseURL.absoluteString)/api/books?limit=2&offset=0"))

            #expect(try await repository.book(id: 7) == Book(id: 7, title: "One"))
        }
    }

    @Test func seedRefresherRetriesTheEndpointWithoutTheChain() async throws {
        let server = try booksServer()
        try await SeedServer.$baseURL.withValue(server.baseURL.appendingPathComponent("api")) {
            let tokenStore = TokenStore()
            let provider = NetworkAgentProvider<Api>(
                plugins: [
                    AuthHeaderInjector(token: { await tokenStore.accessToken }),
                    SeedTokenRefresher(store: tokenStore),
                ],
                agent: TestTransport.agent()
            )
            let (_, response) = try await provider.request(endpoint: .book(id: 1))
            #expect(await tokenStore.accessToken == "t2")
            #expect(server.requests.map(\.path) == ["/api/books/1", "/api/refresh", "/api/books/1"])
            #expect(server.requests[2].header("Authorization") == nil)
            #expect((response as? HTTPURLResponse)?.statusCode == 401)
        }
    }

    @Test func multipartUpload() async throws {
        let server = try booksServer()
        try await SeedServer.$baseURL.withValue(server.baseURL.appendingPathComponent("api")) {
            let (data, response) = try await NetworkAgentProvider<Api>(agent: TestTransport.agent()).request(
                endpoint: .uploadAvatar(Data([1, 2, 3]))
            )
            let contentType = String(decoding: data, as: UTF8.self)
            #expect(contentType.hasPrefix("multipart/form-data; boundary=Boundary-"))
            let body = try #require(server.requests.first?.body)
            let text = String(decoding: body, as: UTF8.self)
            #expect(text.contains("name=\"avatar\"; filename=\"avatar.png\"\r\nContent-Type: image/png"))
            #expect(text.contains("name=\"visibility\"\r\n\r\npublic\r\n"))
            #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Body-Bytes") == "\(body.count)")
        }
    }
}
