import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentCircuitBreaker
import NetworkAgentDiskCache
import NetworkAgentGzip
import NetworkAgentLogging
import NetworkAgentMetrics
import NetworkAgentRetry
import NetworkAgentTokenRefresh

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one place where the Pokédex's provider and its plugin chain are built.
///
/// The chain, outermost first (Docs/Design.md explains the order):
/// 1. metrics (`--metrics`) — every call, with the route template as label and the other plugins' events counted;
/// 2. logging (`--verbose`) — each call and the other plugins' events, secrets redacted;
/// 3. retry — 503s, resets and refused connections, honouring `Retry-After`, for these safe `GET`s;
/// 4. token refresh (`--auth`) — puts the current Bearer token on every attempt and, on a 401, refreshes it once for
///    every request rejected at the same time, then re-sends the final request;
/// 5. gzip — responses decoded consistently, request bodies compressed;
/// 6. disk cache (unless `--no-cache`) — a fresh hit never reaches the network, and `--offline` answers from it
///    alone;
/// 7. circuit breaker — innermost, one circuit per host: every attempt the retry plugin makes passes through it, and
///    while a host fails most of them it fails calls fast (the retry plugin never retries those) until a probe
///    finds the host healed; the cache outside it may still answer.
///
/// Status codes are left to the repository, which maps 404 to "not found".
public struct PokedexClient: Sendable {
    /// The agent's settings: the app's own product token in the `User-Agent`.
    public static let configuration = NetworkAgentConfiguration(appToken: "pokedex/\(PokedexCLI.version)")

    /// The provider with the chain.
    public let provider: NetworkAgentProvider<PokeAPI>
    /// The metrics the chain records, when `--metrics` is on.
    public let metrics: MetricsRegistry?

    /// Builds the provider with the plugins the options ask for.
    ///
    /// - Parameters:
    ///   - options: The command line.
    ///   - baseURL: The API's base URL (the token endpoint lives there too).
    ///   - transport: The transport (a fresh URLSession transport by default).
    /// - Throws: When `--auth` is on and the first token cannot be had.
    public init(
        options: PokedexOptions,
        baseURL: URL,
        transport: any HTTPTransport = URLSessionTransport()
    ) async throws {
        let agent = NetworkAgent(transport: transport, configuration: Self.configuration)
        var plugins: [any NetworkAgentPlugin] = []
        metrics = options.metrics ? MetricsRegistry() : nil
        if let metrics {
            plugins.append(.metrics(metrics))
        }
        if options.verbose {
            plugins.append(.logging(.basic))
        }
        plugins.append(.retry(Self.retryPolicy))
        if options.auth {
            let first: AuthToken
            do {
                first = try await Self.fetchToken(agent: agent, baseURL: baseURL)
            } catch let error as NetworkAgentError {
                throw PokedexError.unreachable(error.message)
            }
            let refresher = TokenRefresher(
                token: first,
                refreshMargin: .milliseconds(50),
                maximumRefreshes: 20,
                refreshWindow: .seconds(10),
                onSessionExpired: { error in Terminal.error("pokedex: the session expired: \(error)") },
                refresh: { agent, _ in try await Self.fetchToken(agent: agent, baseURL: baseURL) }
            )
            // The mirror's stable origin is plain http, but it only ever routes to loopback.
            let mirrorHost = MirrorRoutingTransport.mirrorOrigin.host.map { Set([$0]) } ?? []
            plugins.append(.tokenRefresh(refresher, plainHTTPHosts: mirrorHost))
        }
        plugins.append(.gzip())
        if !options.noCache {
            plugins.append(try Self.cache(options))
        }
        if options.offline {
            plugins.append(CacheOnly())
        }
        plugins.append(.circuitBreaker(Self.breakerConfiguration))
        provider = NetworkAgentProvider(plugins: plugins, agent: agent)
    }

    /// Up to ten attempts with full jitter from 50 ms, within 60 s: enough for `--chaos 0.3`, where three failures
    /// in a row would otherwise happen to one request in 37. Only these idempotent `GET`s are retried.
    ///
    /// The retry budget puts a whole token back per answered attempt (the default puts back 0.1): `--chaos 0.3`
    /// fails three attempts in ten at random, more than the default budget lets through (about one in eleven), and
    /// a sync would run out of retries halfway. With a ratio of 1 retries stop only once more than half the
    /// attempts fail, which a mirror that is down still does (see Docs/Resilience.md).
    static let retryPolicy = RetryPlugin.Policy(
        maximumAttempts: 10,
        baseDelay: .milliseconds(50),
        maximumDelay: .seconds(2),
        budget: RetryPlugin.RetryBudget(maximumTokens: 100, tokenRatio: 1)
    )

    /// One circuit per host (the default key, `scheme://host:port`), tuned for a command that runs for seconds rather
    /// than for a server's uptime: it opens when at least 80 % of the last 20 attempts failed, with 12 attempts at
    /// least, more than the ten of one call, so that one call's retries alone never open it (an unreachable server
    /// still fails `show` with one line). `--chaos 0.3`'s scattered failures practically never reach that rate; an
    /// outage reaches it within about fifteen attempts. It then fails fast for half a second (plus up to 10 % jitter)
    /// and closes after two successful probes.
    static let breakerConfiguration = CircuitBreakerPlugin.Configuration(
        failureRateThreshold: 0.8,
        window: .count(20),
        minimumCalls: 12,
        openInterval: .milliseconds(500),
        probeCalls: 2
    )

    /// The disk cache in `--cache-dir`, or in the user's cache directory.
    static func cache(_ options: PokedexOptions) throws -> DiskCachePlugin {
        let directory =
            options.cacheDirectory
            ?? DiskStore.defaultDirectory.deletingLastPathComponent().appendingPathComponent("pokedex")
        do {
            return try .diskCache(directory: directory)
        } catch {
            throw PokedexError.usage("cannot use the cache in \(directory.path): \(error.message)")
        }
    }

    /// The mirror's token response.
    private struct TokenResponse: Decodable {
        let accessToken: String
        let expiresIn: Double
    }

    /// Fetches a token from the API's `/token` endpoint through the agent's side-request path (no chain).
    ///
    /// `checkTokenResponse` tells the refresher what a failure means: `invalid_grant` ends the session, a `5xx` or
    /// a timeout only fails the requests waiting for this refresh (the retry plugin tries them again).
    static func fetchToken(agent: NetworkAgent, baseURL: URL) async throws -> AuthToken {
        let (data, response) = try await agent.request(PokeAPI(baseURL: baseURL, route: .token))
        try TokenRefresher.checkTokenResponse(response, data: data)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let token = try decoder.decode(TokenResponse.self, from: data)
        return AuthToken(
            credential: .bearer(token.accessToken),
            expiresIn: .milliseconds(Int64(token.expiresIn * 1000))
        )
    }
}

/// `--offline`: asks the disk cache to answer from what it has, stale or not, and never the network
/// (RFC 9111 `only-if-cached`; the cache answers 504 when it has nothing).
struct CacheOnly: NetworkAgentPlugin {
    func onRequest(_ request: consuming URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
        request.setValue("only-if-cached, max-stale", forHTTPHeaderField: "Cache-Control")
        return request
    }
}
