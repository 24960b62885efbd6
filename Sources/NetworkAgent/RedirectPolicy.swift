import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How ``URLSessionTransport`` follows a redirect (RFC 9110 §15.4, with the Fetch standard's method rewrites).
enum RedirectPolicy {
    /// Headers that carry credentials and never cross to another origin, besides those the request marks
    /// (`URLRequest.sensitiveHeaderNames`).
    static let credentialHeaders = ["Authorization", "Cookie", "Proxy-Authorization"]

    /// The statuses of redirects that are followed (when they have a `Location`).
    static let followedStatusCodes: Set<Int> = [301, 302, 303, 307, 308]

    /// The request for the next hop, or `nil` when the response is not a redirect to follow.
    static func nextRequest(
        after request: URLRequest,
        response: HTTPURLResponse
    ) throws(NetworkAgentError)
        -> URLRequest?
    {
        let status = response.statusCode
        guard followedStatusCodes.contains(status),
            let location = response.value(forHTTPHeaderField: "Location")
        else { return nil }
        guard let current = request.url, let target = URL(string: location, relativeTo: current)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else {
            throw NetworkAgentError(
                .redirectFailed,
                "cannot follow a redirect to \(location.debugDescription)",
                response: response
            )
        }
        var next = request
        next.url = target
        let method = request.httpMethod ?? "GET"
        let becomesGet = (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST")
        if becomesGet {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for header in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"] {
                next.setValue(nil, forHTTPHeaderField: header)
            }
        } else if !RequestBody(of: request).canBeSentAgain {
            throw NetworkAgentError(
                .redirectFailed,
                "a \(status) redirect needs the body again, but it was a one-shot stream",
                response: response
            )
        }
        // A downgrade from https to http changes the scheme, so it leaves the origin too.
        if !sameOrigin(current, target) {
            for header in credentialHeaders + request.sensitiveHeaderNames.sorted() {
                next.setValue(nil, forHTTPHeaderField: header)
            }
        }
        return next
    }

    /// Whether two URLs have one ``Origin``; URLs without one (no scheme or host) are never the same.
    static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        guard let origin = Origin(lhs) else { return false }
        return origin == Origin(rhs)
    }
}
