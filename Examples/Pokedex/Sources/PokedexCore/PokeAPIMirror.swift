import Foundation
import NetworkAgent
import NetworkAgentGzip
import NetworkAgentTestServer

/// An offline PokeAPI v2 mirror over real HTTP: Generation I pokemon and species, every type, and the full name
/// index, served on loopback with the live API's URL shapes and headers.
///
/// - `/api/v2/pokemon/?limit=&offset=` pages the full index with absolute `next`/`previous` URLs;
/// - `/api/v2/pokemon/{id|name}/`, `/api/v2/pokemon-species/{id|name}/`, `/api/v2/type/{id|name}/` (trailing
///   slash optional); unknown names answer 404 with a plain-text body;
/// - `Cache-Control: public, max-age=86400, s-maxage=86400`, a weak `ETag` answered with 304 on `If-None-Match`,
///   gzip when the client accepts it;
/// - chaos mode answers a share of requests (all but the token endpoint's) with a 503 and `Retry-After: 1`, or drops
///   the connection; an outage (``Options/outage``) fails every request but the token endpoint's for a while, then
///   heals;
/// - auth mode demands a Bearer token from `POST /api/v2/token`, which expires after `tokenLifetime`.
public final class PokeAPIMirror: Sendable {
    /// How the mirror misbehaves, for demonstrations and tests.
    public struct Options: Sendable {
        /// The share of requests (0...1) that fail: half with a 503, half with a dropped connection.
        public var chaosRate: Double = 0
        /// A stretch in which every request but the token endpoint's fails, then the mirror heals; `nil` for none.
        public var outage: Outage?
        /// Whether requests need a Bearer token from `/api/v2/token`.
        public var requiresAuth = false
        /// How long a token lasts.
        public var tokenLifetime: Duration = .seconds(30)
        /// The seed of the chaos dice, for reproducible runs.
        public var seed: UInt64 = 0x5EED
        /// The origin the mirror's absolute URLs name (`next`, `previous`, every resource's `url`), e.g.
        /// `http://pokeapi.mirror`; `nil` names the host each request was sent to (its `Host` header).
        public var origin: URL?

        /// Default options: no chaos, no auth.
        public init() {}
    }

    /// A stretch in which the mirror is down: it answers every request (the token endpoint's excepted) with a 503,
    /// without `Retry-After`, then heals.
    public struct Outage: Sendable {
        /// How many requests the mirror answers (or fails by chaos) before the outage starts.
        public var after: Int
        /// How long the outage lasts from its first failed request.
        public var duration: Duration

        /// An outage.
        ///
        /// - Parameters:
        ///   - after: How many requests the mirror answers first.
        ///   - duration: How long it then fails everything.
        public init(after: Int, duration: Duration) {
            self.after = after
            self.duration = duration
        }
    }

    private let server: LoopbackServer
    private let state: MirrorState

    /// The API's base URL, `http://127.0.0.1:<port>/api/v2`.
    public var baseURL: URL { server.baseURL.appendingPathComponent("api/v2") }
    /// The port.
    public var port: Int { server.port }
    /// Requests answered so far (every attempt, tokens included).
    public var requestCount: Int { server.requestCount }
    /// Token requests answered so far.
    public var tokensIssued: Int { state.tokensIssued }

    /// Starts the mirror.
    ///
    /// - Parameters:
    ///   - port: The port; 0 picks a free one.
    ///   - options: Chaos and auth.
    /// - Throws: When the bundled data cannot be read or the port cannot be bound.
    public init(port: Int = 0, options: Options = Options()) throws {
        let data = try MirrorData.load()
        let state = MirrorState(data: data, options: options)
        self.state = state
        self.server = try LoopbackServer(port: port) { request in state.answer(request) }
    }

    /// Stops serving.
    public func stop() {
        server.stop()
    }
}

/// The mirror's resources, indexed by kind and by id and name.
struct MirrorData: Sendable {
    /// Payloads by `kind/id`, e.g. `pokemon/25`, with URLs as in the data (relative).
    let payloads: [String: Data]
    /// Ids by `kind/name`, e.g. `pokemon/pikachu` → `25`.
    let ids: [String: String]
    /// The full name index.
    let index: [(name: String, url: String)]

    static func load() throws -> MirrorData {
        guard let url = Bundle.module.url(forResource: "pokeapi", withExtension: "json") else {
            throw PokedexError.unexpectedPayload("the bundled PokeAPI data is missing")
        }
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        guard let resources = object as? [String: Any] else {
            throw PokedexError.unexpectedPayload("the bundled PokeAPI data is not an object")
        }
        var payloads: [String: Data] = [:]
        var ids: [String: String] = [:]
        var index: [(String, String)] = []
        for (key, value) in resources {
            let parts = key.split(separator: "/")
            if parts.count == 2, let resource = value as? [String: Any] {
                payloads[key] = try JSONSerialization.data(
                    withJSONObject: resource,
                    options: [.sortedKeys, .withoutEscapingSlashes]
                )
                if let name = resource["name"] as? String { ids["\(parts[0])/\(name)"] = String(parts[1]) }
            } else if key == "pokemon", let list = value as? [String: Any],
                let results = list["results"] as? [[String: String]]
            {
                index = results.compactMap { item in item["name"].flatMap { name in item["url"].map { (name, $0) } } }
            }
        }
        return MirrorData(payloads: payloads, ids: ids, index: index)
    }
}

/// The mirror's request handling and its little mutable state (tokens, chaos dice).
final class MirrorState: Sendable {
    private let data: MirrorData
    private let options: PokeAPIMirror.Options
    private struct Mutable {
        var random: SplitMix64
        var tokens: [String: ContinuousClock.Instant] = [:]
        var issued = 0
        /// Requests past the token endpoint, for the outage's start.
        var answered = 0
        var outageStart: ContinuousClock.Instant?
    }
    private let mutable: Locked<Mutable>

    init(data: MirrorData, options: PokeAPIMirror.Options) {
        self.data = data
        self.options = options
        self.mutable = Locked(Mutable(random: SplitMix64(seed: options.seed)))
    }

    var tokensIssued: Int { mutable.withLock { $0.issued } }

    func answer(_ request: ServerRequest) -> ServerResponse {
        var path = request.path.split(separator: "/").map(String.init)
        guard path.count >= 2, path[0] == "api", path[1] == "v2" else { return notFound() }
        path.removeFirst(2)
        // Chaos spares the token endpoint: the first token is fetched before the retry plugin can help, and a refresh
        // that failed would fail the requests waiting for it (the session survives; the retry plugin tries again).
        if path == ["token"], request.method == "POST" { return issueToken() }
        if isDown() { return .text("the mirror is down for maintenance", status: 503) }
        if let chaos = chaos() { return chaos }
        if options.requiresAuth, !isAuthorized(request) {
            return .text(
                "invalid or expired token",
                status: 401,
                headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")]
            )
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .text("method not allowed", status: 405)
        }
        let origin = options.origin.map(Self.originText) ?? "http://\(request.header("Host") ?? "127.0.0.1")"
        switch path.count {
        case 1 where path[0] == "pokemon":
            return represent(listPage(request, origin: origin), for: request, origin: origin)
        case 2:
            let kind = path[0]
            let key =
                Int(path[1]) != nil
                ? "\(kind)/\(path[1])" : data.ids["\(kind)/\(path[1].lowercased())"].map { "\(kind)/\($0)" }
            guard let key, let payload = data.payloads[key] else { return notFound() }
            return represent(payload, for: request, origin: origin)
        default:
            return notFound()
        }
    }

    /// `scheme://host[:port]` of a URL, without a trailing slash.
    private static func originText(_ url: URL) -> String {
        var text = "\(url.scheme ?? "http")://\(url.host ?? "127.0.0.1")"
        if let port = url.port { text += ":\(port)" }
        return text
    }

    private func notFound() -> ServerResponse {
        .text("Not Found", status: 404)
    }

    /// Whether this request falls in the outage (and counts it towards the outage's start).
    private func isDown() -> Bool {
        guard let outage = options.outage else { return false }
        let now = ContinuousClock.now
        return mutable.withLock { mutable in
            mutable.answered += 1
            if mutable.outageStart == nil, mutable.answered > outage.after { mutable.outageStart = now }
            return mutable.outageStart.map { now < $0 + outage.duration } ?? false
        }
    }

    private func chaos() -> ServerResponse? {
        guard options.chaosRate > 0 else { return nil }
        let (roll, coin) = mutable.withLock { ($0.random.nextDouble(), $0.random.nextDouble()) }
        guard roll < options.chaosRate else { return nil }
        if coin < 0.5 { return .text("the mirror is having a bad day", status: 503, headers: [("Retry-After", "1")]) }
        return ServerResponse(fault: .resetBeforeResponse)
    }

    private func issueToken() -> ServerResponse {
        let token = UUID().uuidString
        let expiry = ContinuousClock.now + options.tokenLifetime
        mutable.withLock {
            $0.tokens[token] = expiry
            $0.issued += 1
        }
        let seconds = options.tokenLifetime.timeInterval
        let body = #"{"access_token":"\#(token)","token_type":"Bearer","expires_in":\#(seconds)}"#
        return .json(Data(body.utf8), headers: [("Cache-Control", "no-store")])
    }

    private func isAuthorized(_ request: ServerRequest) -> Bool {
        guard let header = request.header("Authorization"), header.hasPrefix("Bearer ") else { return false }
        let token = String(header.dropFirst("Bearer ".count))
        return mutable.withLock { $0.tokens[token].map { $0 > .now } ?? false }
    }

    private func listPage(_ request: ServerRequest, origin: String) -> Data {
        func number(_ name: String, _ fallback: Int) -> Int {
            request.queryItems.first { $0.name == name }?.value.flatMap(Int.init).map { max(0, $0) } ?? fallback
        }
        let limit = number("limit", 20)
        let offset = number("offset", 0)
        let page = data.index.dropFirst(offset).prefix(limit)
        func link(_ offset: Int) -> String { "\(origin)/api/v2/pokemon/?limit=\(limit)&offset=\(offset)" }
        let object: [String: Any] = [
            "count": data.index.count,
            "next": offset + limit < data.index.count ? link(offset + limit) : NSNull(),
            "previous": offset > 0 ? link(max(0, offset - limit)) : NSNull(),
            "results": page.map { ["name": $0.name, "url": $0.url] },
        ]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data()
    }

    /// The payload with absolute URLs, as the live API serves it, with caching headers, ETag and gzip.
    private func represent(_ payload: Data, for request: ServerRequest, origin: String) -> ServerResponse {
        let body = Data(
            String(decoding: payload, as: UTF8.self)
                .replacingOccurrences(of: "\"/api/v2/", with: "\"\(origin)/api/v2/").utf8
        )
        let etag = "W/\"\(String(fnv1a(body), radix: 16))\""
        var headers: [(name: String, value: String)] = [
            ("Cache-Control", "public, max-age=86400, s-maxage=86400"), ("ETag", etag),
        ]
        if let match = request.header("If-None-Match"),
            match.split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == etag
            })
        {
            return ServerResponse(status: 304, headers: headers)
        }
        let acceptsGzip = request.header("Accept-Encoding")?.lowercased().contains("gzip") ?? false
        if acceptsGzip, let compressed = try? Deflater.compress(body) {
            headers.append(("Content-Encoding", "gzip"))
            headers.append(("Vary", "Accept-Encoding"))
            return .json(compressed, headers: headers)
        }
        return .json(body, headers: headers)
    }

    private func fnv1a(_ data: Data) -> UInt64 {
        data.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }
}

/// A small seeded random source (SplitMix64), so chaos runs are reproducible.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func nextDouble() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}
