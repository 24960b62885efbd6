import Foundation
import NetworkAgent
import NetworkAgentTestServer
import PokedexCore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The offline mirror speaks PokeAPI's URL shapes and headers over real HTTP.
@Suite struct PokeAPIMirrorTests {
    struct Raw: NetworkAgentEndpoint {
        var baseURL: URL
        var path: String
        var headers: [String: String] = ["Accept": "application/json"]
        var method: HTTPMethod { .get }
        var task: HTTPTask { .requestPlain }
    }

    let mirror: PokeAPIMirror
    let agent = NetworkAgent(transport: URLSessionTransport())

    init() throws {
        mirror = try PokeAPIMirror()
    }

    func get(_ path: String, headers: [String: String] = [:]) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await agent.request(
            Raw(baseURL: mirror.baseURL, path: path, headers: ["Accept": "application/json"].merging(headers) { $1 })
        )
        return (data, try #require(response as? HTTPURLResponse))
    }

    @Test func pagesCarryAbsoluteNextAndPreviousURLs() async throws {
        let (data, _) = try await get("/pokemon", headers: [:])
        let first = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(first?["count"] as? Int == 1351)
        let page = try await agent.request(
            Raw(baseURL: URL(string: mirror.baseURL.absoluteString + "/pokemon/?limit=2&offset=2")!, path: "")
        )
        let object = try JSONSerialization.jsonObject(with: page.data) as? [String: Any]
        let results = object?["results"] as? [[String: String]]
        #expect(results?.map { $0["name"] } == ["venusaur", "charmander"])
        #expect((object?["next"] as? String)?.hasSuffix("/api/v2/pokemon/?limit=2&offset=4") == true)
        #expect((object?["previous"] as? String)?.hasPrefix("http://") == true)
        #expect(results?.first?["url"]?.hasPrefix("http://") == true)
    }

    @Test(arguments: ["/pokemon/25/", "/pokemon/25", "/pokemon/pikachu/", "/pokemon/PIKACHU"])
    func resourcesByIdOrNameWithOrWithoutTrailingSlash(path: String) async throws {
        let (data, response) = try await get(path)
        #expect(response.statusCode == 200)
        #expect((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["name"] as? String == "pikachu")
        #expect(response.value(forHTTPHeaderField: "Cache-Control") == "public, max-age=86400, s-maxage=86400")
    }

    @Test func unknownNamesAre404WithPlainText() async throws {
        let (data, response) = try await get("/pokemon/missingno/")
        #expect(response.statusCode == 404)
        #expect(response.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/plain") == true)
        #expect(String(decoding: data, as: UTF8.self) == "Not Found")
    }

    @Test func etagsAnswer304() async throws {
        let (_, first) = try await get("/type/fire/")
        let etag = try #require(first.value(forHTTPHeaderField: "ETag"))
        #expect(etag.hasPrefix("W/\""))
        let (body, second) = try await get("/type/fire/", headers: ["If-None-Match": etag])
        #expect(second.statusCode == 304)
        #expect(body.isEmpty)
    }

    @Test func gzipWhenTheClientAcceptsIt() async throws {
        // libcurl advertises and decodes gzip itself: the body arrives decoded, the header stays.
        let (data, response) = try await get("/pokemon-species/25/")
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["name"] as? String == "pikachu")
    }
}

@Suite struct PokedexServeTests {
    @Test func serveRunsTheMirrorForAnyClient() async throws {
        let process = Process()
        process.executableURL = PokedexRun.executable
        process.arguments = ["serve", "--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        // The first line names the URL; read it off the pipe without blocking the pool for long.
        let line = await Task.detached {
            String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        }.value
        let url = try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init))
        let agent = NetworkAgent(transport: URLSessionTransport())
        let (data, response) = try await agent.request(
            PokeAPIMirrorTests.Raw(baseURL: try #require(URL(string: url)), path: "/pokemon/1/")
        )
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["name"] as? String == "bulbasaur")
    }
}
