import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a ``DiskCachePlugin`` answered a request, as carried by the ``DiskCachePlugin/defaultStatusHeader``
/// response header (`X-NetworkAgent-Cache: hit`).
public enum CacheStatus: String, Sendable, Hashable, CaseIterable {
    /// A fresh stored response (or, for a range request, the part of it asked for); the network was not used.
    case hit
    /// A stored response the origin confirmed with a 304; the body came from the cache.
    case revalidated
    /// A stale stored response: the request accepted it (`max-stale`), it is being refreshed in the background
    /// (`stale-while-revalidate`), or the network failed (`stale-if-error`, offline fallback).
    case stale
    /// A response from the network (stored or not), or the 504 of an `only-if-cached` request with nothing stored.
    case miss

    /// Reads the status a cache put on a response.
    ///
    /// - Parameters:
    ///   - response: A response from a provider whose chain has a ``DiskCachePlugin``.
    ///   - header: The header the plugin was configured with; defaults to ``DiskCachePlugin/defaultStatusHeader``.
    /// - Returns: The status, or `nil` when the response does not carry one (the cache did not handle the request:
    ///   an unsafe method, a conditional request of the caller's own, or a range it could not answer from the
    ///   store).
    public init?(response: URLResponse, header: String = DiskCachePlugin.defaultStatusHeader) {
        // Foundation's answer, without its lowercasing of the name and of every field name per call (two
        // allocations for the default name's 20 bytes) on a response CurlTransport built.
        guard let value = (response as? HTTPURLResponse)?.headerField(header) else { return nil }
        self.init(rawValue: value)
    }
}
