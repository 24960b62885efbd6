// swift-tools-version: 6.0
import PackageDescription

// MARK: - Plugins
// Each plugin is its own library product `X`, a target under `Plugins/X/` and a test target `XTests`.
// A plugin depends on the core and on nothing else but the targets listed here.
let plugins: [(name: String, dependencies: [Target.Dependency])] = [
    ("NetworkAgentRetry", [])
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
    .target(name: "NetworkAgentTestServer"),
]

for plugin in plugins {
    products.append(.library(name: plugin.name, targets: [plugin.name]))
    targets.append(
        .target(name: plugin.name, dependencies: ["NetworkAgent"] + plugin.dependencies, path: "Plugins/\(plugin.name)")
    )
    targets.append(
        .testTarget(
            name: "\(plugin.name)Tests",
            dependencies: [.target(name: plugin.name), "NetworkAgentTesting", "NetworkAgentTestServer"]
        )
    )
}

// MARK: - Tests
targets += [
    .testTarget(
        name: "NetworkAgentTests",
        dependencies: ["NetworkAgent", "NetworkAgentTesting", "NetworkAgentTestServer"]
    ),
    .testTarget(name: "NetworkAgentTestingTests", dependencies: ["NetworkAgentTesting"]),
    .testTarget(name: "NetworkAgentTestServerTests", dependencies: ["NetworkAgentTestServer"]),
]

// MARK: - Language settings
for target in targets {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("MemberImportVisibility"),
        ]
}

let package = Package(
    name: "NetworkAgent",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: products,
    targets: targets,
    swiftLanguageModes: [.v6]
)
