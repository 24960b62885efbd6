import Foundation
import NetworkAgent

/// The labels every request measurement carries: a low-cardinality route and the HTTP method.
public struct MetricsLabels: Hashable, Sendable, CustomStringConvertible {
    /// The longest route kept; longer names are cut to this many characters.
    public static let maximumRouteLength = 100

    /// The route used when an endpoint yields no usable name.
    public static let unknownRoute = "unknown"

    /// The endpoint's route: its ``MetricsRouteNaming/metricsRoute``, its enum case name without associated
    /// values, or, for a type that is not an enum, its type name. Never the URL.
    public var route: String
    /// The endpoint's HTTP method as sent, e.g. `GET`.
    public var method: String

    /// Creates labels.
    ///
    /// - Parameters:
    ///   - route: A low-cardinality route name; cut to ``maximumRouteLength`` characters.
    ///   - method: The HTTP method, e.g. `GET`.
    public init(route: String, method: String) {
        self.route = Self.clean(route)
        self.method = method
    }

    /// The labels of an endpoint: its route (see ``route``) and its method.
    ///
    /// - Parameter endpoint: The endpoint of the call.
    public init(endpoint: any NetworkAgentEndpoint) {
        self.init(route: Self.route(for: endpoint), method: Self.name(of: endpoint.method))
    }

    /// `method.name` (the raw value uppercased), without uppercasing it per request.
    static func name(of method: HTTPMethod) -> String {
        switch method {
        case .get: "GET"
        case .post: "POST"
        case .put: "PUT"
        case .patch: "PATCH"
        case .delete: "DELETE"
        case .head: "HEAD"
        case .options: "OPTIONS"
        }
    }

    /// `route method`, e.g. `pokemon GET`.
    public var description: String { "\(route) \(method)" }

    /// The route of an endpoint, without ever looking at its URL.
    ///
    /// - Parameter endpoint: The endpoint of the call.
    /// - Returns: ``MetricsRouteNaming/metricsRoute`` when the endpoint adopts it; for an enum, the case name
    ///   (`.pokemon(id: 25)` gives `pokemon`); otherwise the type name.
    public static func route(for endpoint: any NetworkAgentEndpoint) -> String {
        // What kind of route a type has is worked out once per type: the `MetricsRouteNaming` cast of a type that
        // does not adopt it searches the conformances (~0.2 µs), and a `Mirror` per request costs microseconds.
        let type = ObjectIdentifier(Swift.type(of: endpoint))
        switch typeRoutes.withLock({ $0[type] }) {
        case .fixed(let route): return route
        case .enumCase: return caseName(of: endpoint, Mirror(reflecting: endpoint))
        case .named: if let named = endpoint as? any MetricsRouteNaming { return named.metricsRoute }
        case nil: break
        }
        let (kind, route) = uncachedRoute(for: endpoint)
        typeRoutes.withLock { routes in
            if routes.count < maximumRememberedTypes { routes[type] = kind }
        }
        return route
    }

    /// How a type's endpoints are named, as ``route(for:)`` remembers it per type.
    enum TypeRoute: Equatable {
        /// The type adopts ``MetricsRouteNaming``: each endpoint names its own route.
        case named
        /// An enum: the route is the case name of each endpoint.
        case enumCase
        /// Any other type: one route for all its endpoints, the type's name.
        case fixed(String)
    }

    /// The route of an endpoint and the kind of route its type has, worked out from scratch: what ``route(for:)``
    /// gives the first endpoint of a type.
    static func uncachedRoute(for endpoint: any NetworkAgentEndpoint) -> (TypeRoute, String) {
        if let named = endpoint as? any MetricsRouteNaming {
            return (.named, named.metricsRoute)
        }
        let mirror = Mirror(reflecting: endpoint)
        guard mirror.displayStyle == .enum else {
            let route = String(describing: Swift.type(of: endpoint))
            return (.fixed(route), route)
        }
        return (.enumCase, caseName(of: endpoint, mirror))
    }

    /// The case name of an enum endpoint, from its mirror.
    private static func caseName(of endpoint: any NetworkAgentEndpoint, _ mirror: Mirror) -> String {
        // A case with associated values reflects as one child labelled with the case name; a case without any
        // has no children and describes itself by its name (unless the enum customises its description, which is
        // then still one fixed text per case).
        if let caseName = mirror.children.first?.label {
            return caseName
        }
        return String(describing: endpoint)
    }

    /// How the routes of the endpoint types seen so far are found, by type.
    private static let typeRoutes = Locked([ObjectIdentifier: TypeRoute]())
    /// The most types ``typeRoutes`` remembers (an app has a few endpoint types).
    private static let maximumRememberedTypes = 1_024

    private static func clean(_ route: String) -> String {
        // Most routes are already clean: no whitespace at either end, short enough. ASCII ends are judged on their
        // bytes (in ASCII, `.whitespacesAndNewlines` is the tab through the carriage return, and the space).
        let isASCIIBlank: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
        if route.utf8.count <= maximumRouteLength, let first = route.utf8.first, let last = route.utf8.last,
            first < 0x80, last < 0x80, !isASCIIBlank(first), !isASCIIBlank(last)
        {
            return route
        }
        if route.utf8.count <= maximumRouteLength, let first = route.unicodeScalars.first,
            let last = route.unicodeScalars.last, !CharacterSet.whitespacesAndNewlines.contains(first),
            !CharacterSet.whitespacesAndNewlines.contains(last)
        {
            return route
        }
        let trimmed = route.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return unknownRoute }
        return trimmed.count > maximumRouteLength ? String(trimmed.prefix(maximumRouteLength)) : trimmed
    }
}
