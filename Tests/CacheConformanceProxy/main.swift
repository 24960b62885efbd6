// A reverse proxy for running the public HTTP caching test suite (github.com/http-tests/cache-tests) against the
// disk cache: every request it receives goes to the origin through a provider whose only cache is a DiskCachePlugin
// on a fresh directory, over CurlTransport (redirects are passed on, not followed). Scripts/cache-conformance runs
// it. Not a product.
//
// Usage: CacheConformanceProxy <origin base URL> <empty cache directory> [port]
// Prints `port=<port>` once it listens, then serves until it is killed.
import Foundation
import NetworkAgent
import NetworkAgentCurl
import NetworkAgentDiskCache
import NetworkAgentTestServer

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("CacheConformanceProxy: \(message)\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 3 || arguments.count == 4, URL(string: arguments[1]) != nil,
    let port = arguments.count == 4 ? Int(arguments[3]) : 0
else {
    fail("usage: CacheConformanceProxy <origin base URL> <empty cache directory> [port]")
}
let cache: DiskCachePlugin
do {
    cache = try DiskCachePlugin(directory: URL(fileURLWithPath: arguments[2], isDirectory: true))
} catch {
    fail("cannot open the cache: \(error)")
}
let transport = CurlTransport(configuration: CurlTransport.Configuration(proxy: "", maximumRedirects: 0))
let forwarder = Forwarder(
    origin: arguments[1].hasSuffix("/") ? String(arguments[1].dropLast()) : arguments[1],
    provider: NetworkAgentProvider(plugins: [ForwardingPlugin(), cache], agent: NetworkAgent(transport: transport))
)
let server: LoopbackServer
do {
    server = try LoopbackServer(port: port) { forwarder.blockingAnswer($0) }
} catch {
    fail("cannot listen: \(error)")
}
FileHandle.standardOutput.write(Data("port=\(server.port)\n".utf8))
while true { sleep(3600) }
