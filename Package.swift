// swift-tools-version: 6.0
import PackageDescription

// MARK: - Plugins
// Each plugin is its own library product `X`, a target under `Plugins/X/` and a test target `XTests`.
// A plugin depends on the core and on nothing else but the targets listed here.
let plugins: [(name: String, dependencies: [Target.Dependency])] = [
    (name: "NetworkAgentLogging", dependencies: []),
    (name: "NetworkAgentAuth", dependencies: []),
    (name: "NetworkAgentTokenRefresh", dependencies: [.target(name: "NetworkAgentAuth")]),
    (name: "NetworkAgentGzip", dependencies: ["CZlib"]),
    (name: "NetworkAgentDiskCache", dependencies: []),
    (name: "NetworkAgentMetrics", dependencies: []),
    (name: "NetworkAgentRetry", dependencies: []),
    (name: "NetworkAgentCircuitBreaker", dependencies: []),
    (name: "NetworkAgentRedisCache", dependencies: [.target(name: "NetworkAgentDiskCache"), "CHiredis"]),
]

// MARK: - Core Library
var products: [Product] = [
    .library(name: "NetworkAgent", targets: ["NetworkAgent"]),
    .library(name: "NetworkAgentTesting", targets: ["NetworkAgentTesting"]),
]

var targets: [Target] = [
    .target(name: "NetworkAgent"),
    .target(name: "NetworkAgentTesting", dependencies: ["NetworkAgent"]),
    // An in-process HTTP/1.1 server on loopback, for tests and the example's offline mirror. Not a product.
    .target(name: "NetworkAgentTestServer", dependencies: ["NetworkAgent"]),
    // The system zlib, for NetworkAgentGzip.
    .systemLibrary(
        name: "CZlib",
        path: "Sources/CZlib",
        pkgConfig: "zlib",
        providers: [.apt(["zlib1g-dev"]), .yum(["zlib-devel"]), .brew(["zlib"])]
    ),
    // hiredis, Redis's C client, for NetworkAgentRedisCache only: nothing else needs it installed to build.
    .systemLibrary(
        name: "CHiredis",
        path: "Sources/CHiredis",
        pkgConfig: "hiredis",
        providers: [.apt(["libhiredis-dev"]), .brew(["hiredis"])]
    ),
]

for plugin in plugins {
    products.append(.library(name: plugin.name, targets: [plugin.name]))
    targets.append(
        .target(name: plugin.name, dependencies: ["NetworkAgent"] + plugin.dependencies, path: "Plugins/\(plugin.name)")
    )
    targets.append(
        .testTarget(
            name: "\(plugin.name)Tests",
            dependencies: [.target(name: plugin.name), "NetworkAgent"] + plugin.dependencies + [
                "NetworkAgentTesting", "NetworkAgentTestServer", "NetworkAgentTestSupport", "NetworkAgentToolSupport",
            ]
        )
    )
}

// The circuit breaker's tests check it where it sits in a chain: inside the retry plugin, inside the disk cache, under
// the metrics plugin.
for target in targets where target.name == "NetworkAgentCircuitBreakerTests" {
    target.dependencies += [
        .target(name: "NetworkAgentAuth"), .target(name: "NetworkAgentRetry"), .target(name: "NetworkAgentDiskCache"),
        .target(name: "NetworkAgentMetrics"), .target(name: "NetworkAgentLogging"),
        .target(name: "NetworkAgentTokenRefresh"),
    ]
}

// MARK: - Transports
// NetworkAgentCurl: `CurlTransport`, libcurl driven directly through one multi handle. `CCurl` carries its own
// header for the part of libcurl's ABI it uses, so nothing but the shared library (which FoundationNetworking needs
// on Linux anyway) has to be installed; linked by name, without unsafeFlags.
products.append(.library(name: "NetworkAgentCurl", targets: ["NetworkAgentCurl"]))
targets += [
    .target(
        name: "CCurl",
        path: "Sources/CCurl",
        linkerSettings: [
            .linkedLibrary(":libcurl.so.4", .when(platforms: [.linux])),
            .linkedLibrary("curl", .when(platforms: [.macOS, .iOS, .tvOS, .watchOS])),
        ]
    ),
    .target(name: "NetworkAgentCurl", dependencies: ["NetworkAgent", "CCurl"]),
    .testTarget(
        name: "NetworkAgentCurlTests",
        dependencies: [
            "NetworkAgentCurl", "NetworkAgent", "NetworkAgentTestServer", "NetworkAgentTestSupport", "CCurl",
        ]
    ),
]

// Plugins that link a system library beyond zlib (hiredis): left out of the example, so that `swift run pokedex` builds
// on a machine without them.
let examplePlugins = plugins.filter { $0.name != "NetworkAgentRedisCache" }

// MARK: - Examples
// The Pokédex command-line example and its offline PokeAPI mirror (Examples/Pokedex).
products.append(.executable(name: "pokedex", targets: ["pokedex"]))
targets += [
    .target(
        name: "PokedexCore",
        dependencies: ["NetworkAgent", "NetworkAgentCurl", "NetworkAgentTestServer"]
            + examplePlugins.map { .target(name: $0.name) },
        path: "Examples/Pokedex/Sources/PokedexCore",
        resources: [.copy("Resources/pokeapi.json")]
    ),
    .executableTarget(name: "pokedex", dependencies: ["PokedexCore"], path: "Examples/Pokedex/Sources/pokedex"),
]

// MARK: - Benchmarks
// `swift run -c release networkagent-bench [--quick] [--json FILE] [SCENARIO…]`: every performance claim as a ratio
// against a baseline measured in the same run (Docs/Performance.md). Depends on every plugin in the list above, on
// CurlTransport, and on CCurl directly (curl_overhead's baseline is a raw libcurl multi loop).
products.append(.executable(name: "networkagent-bench", targets: ["NetworkAgentBench"]))
targets.append(
    .executableTarget(
        name: "NetworkAgentBench",
        dependencies: [
            "NetworkAgent", "NetworkAgentTestServer", "NetworkAgentToolSupport", "NetworkAgentCurl", "CCurl",
            "CHiredis", "CMallocCounter",
        ]
            + plugins.map { .target(name: $0.name) },
        path: "Benchmarks/NetworkAgentBench"
    )
)
// Counts the bench process's allocations (`allocations_per_request`) by defining malloc in the bench executable, so
// it is linked into the bench only, never into a library or a test.
targets.append(.target(name: "CMallocCounter", path: "Benchmarks/CMallocCounter"))

// MARK: - Test support
// Not products. NetworkAgentTestSupport (Tests/NetworkAgentTestSupport) is the one home of the helpers this package's
// tests share; every test target depends on it. It holds `TestTransport`, the transport the over-the-wire tests run
// on, chosen per process by NETWORKAGENT_TEST_TRANSPORT (`urlsession` or `curl`; Scripts/test runs both), the
// peak-memory gate, the disk and Redis cache tests' harness, and the fakes several suites use; it depends on libcurl,
// which NetworkAgentTesting (the public test kit) must not. NetworkAgentToolSupport holds what the benchmark shares
// with the tests, without Testing so that a release executable links it: the /proc/self/status reader, a seeded
// generator, and the Redis cache worker that the tests' RedisCacheWorker and the bench's `--redis-worker` both run.
targets += [
    .target(
        name: "NetworkAgentToolSupport",
        dependencies: ["NetworkAgent", "NetworkAgentTestServer", "NetworkAgentDiskCache", "NetworkAgentRedisCache"],
        path: "Tests/NetworkAgentToolSupport"
    ),
    .target(
        name: "NetworkAgentTestSupport",
        dependencies: [
            "NetworkAgent", "NetworkAgentCurl", "NetworkAgentTesting", "NetworkAgentTestServer",
            "NetworkAgentDiskCache",
            "NetworkAgentToolSupport",
        ],
        path: "Tests/NetworkAgentTestSupport"
    ),
]

// MARK: - Tests
let testSupport: [Target.Dependency] = ["NetworkAgentTestSupport", "NetworkAgentToolSupport"]
targets += [
    .testTarget(
        name: "NetworkAgentTests",
        dependencies: ["NetworkAgent", "NetworkAgentTesting", "NetworkAgentTestServer"] + testSupport
    ),
    .testTarget(name: "NetworkAgentTestingTests", dependencies: ["NetworkAgentTesting", "NetworkAgent"] + testSupport),
    .testTarget(
        name: "NetworkAgentTestServerTests",
        dependencies: ["NetworkAgentTestServer", "NetworkAgent"] + testSupport
    ),
    .testTarget(
        name: "PokedexTests",
        dependencies: ["PokedexCore", "NetworkAgent", "NetworkAgentTestServer"] + testSupport,
        exclude: ["Fixtures"]
    ),
    // Against real peers (httpbin, nginx) started by Scripts/interop/start; skipped by name when they are not up.
    .testTarget(
        name: "NetworkAgentInteropTests",
        dependencies: ["NetworkAgent", "NetworkAgentCurl", "NetworkAgentTestServer"] + testSupport
            + plugins.map { .target(name: $0.name) }
    ),
    // Every plugin against every kind of exchange over the loopback server: one parameterised test on the transport
    // of TestTransport (NETWORKAGENT_TEST_TRANSPORT), so it runs on both transports.
    .testTarget(
        name: "NetworkAgentMatrixTests",
        dependencies: ["NetworkAgent", "NetworkAgentTesting", "NetworkAgentTestServer"] + testSupport
            + plugins.map { .target(name: $0.name) }
    ),
    // Writes cache entries in a loop until killed: the child process of the disk cache's crash test. Not a product.
    .executableTarget(
        name: "DiskCacheCrashWriter",
        dependencies: ["NetworkAgentDiskCache"],
        path: "Tests/DiskCacheCrashWriter"
    ),
    // A reverse proxy through a DiskCachePlugin on CurlTransport, for running the public HTTP caching test suite
    // (Scripts/cache-conformance). Not a product; neither the tests nor CI run it.
    .executableTarget(
        name: "CacheConformanceProxy",
        dependencies: ["NetworkAgent", "NetworkAgentCurl", "NetworkAgentDiskCache", "NetworkAgentTestServer"],
        path: "Tests/CacheConformanceProxy"
    ),
    // A second process on a shared Redis store: the child of the Redis cache's multi-process tests, on the run's
    // TestTransport. Its steps are NetworkAgentToolSupport's `RedisWorker`, which the bench runs too. Not a product.
    .executableTarget(
        name: "RedisCacheWorker",
        dependencies: ["NetworkAgentTestSupport", "NetworkAgentToolSupport"],
        path: "Tests/RedisCacheWorker"
    ),
]

// MARK: - Language settings
for target in targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("MemberImportVisibility"),
        ]
}

let package = Package(
    name: "NetworkAgent",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: products,
    targets: targets,
    swiftLanguageModes: [.v6]
)
