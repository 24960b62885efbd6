import Foundation

/// Where and how to connect: the parts of a `redis://` URL.
struct RedisEndpoint: Sendable, Equatable {
    var host: String
    var port: Int
    var database: Int
    /// The ACL user name (Redis 6 and later), or `nil` for the default user.
    var user: String?
    var password: String?

    /// Parses `redis://[[user]:password@]host[:port][/db]`.
    ///
    /// - Throws: ``RedisStore/Error`` with ``RedisStore/Error/Code/tlsUnsupported`` for `rediss://`, and
    ///   ``RedisStore/Error/Code/invalidURL`` for anything else that is not such a URL.
    init(url: URL) throws(RedisStore.Error) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased()
        else { throw RedisStore.Error(.invalidURL, "not a URL: use redis://host:port/db") }
        if scheme == "rediss" {
            throw RedisStore.Error(
                .tlsUnsupported,
                "rediss:// needs TLS, which the hiredis this store is built on (0.14, as Debian ships it) does not offer"
            )
        }
        guard scheme == "redis" else {
            throw RedisStore.Error(.invalidURL, "unsupported scheme \(scheme): use redis://host:port/db")
        }
        guard let host = components.host, !host.isEmpty else {
            throw RedisStore.Error(.invalidURL, "no host: use redis://host:port/db")
        }
        let port = components.port ?? 6379
        guard (1...65_535).contains(port) else { throw RedisStore.Error(.invalidURL, "port \(port) out of range") }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard let database = path.isEmpty ? 0 : Int(path), database >= 0 else {
            throw RedisStore.Error(.invalidURL, "the path must be a database number, as in redis://host:6379/0")
        }
        self.host = host
        self.port = port
        self.database = database
        let user = components.user?.removingPercentEncoding ?? components.user
        self.user = (user?.isEmpty ?? true) ? nil : user
        self.password = components.password?.removingPercentEncoding ?? components.password
    }
}
