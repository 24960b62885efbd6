import NetworkAgent

/// An endpoint that chooses, per case, whether and how ``AuthPlugin`` authorizes it.
///
/// Endpoints that do not adopt it get ``AuthorizationRequirement/default``.
///
/// ```swift
/// extension Api: AuthorizableEndpoint {
///     var authorization: AuthorizationRequirement {
///         switch self {
///         case .login, .refresh: .none
///         case .legacy: .credential(.header(name: "X-API-Key", value: legacyKey))
///         default: .default
///         }
///     }
/// }
/// ```
public protocol AuthorizableEndpoint: NetworkAgentEndpoint {
    /// Whether and how requests for this endpoint are authorized.
    var authorization: AuthorizationRequirement { get }
}

/// What ``AuthPlugin`` does for one endpoint.
public enum AuthorizationRequirement: Sendable, Hashable {
    /// No credential: login and refresh endpoints, public resources, other hosts.
    case none
    /// The credential the plugin's provider supplies.
    case `default`
    /// This credential instead of the provider's, e.g. a different scheme for one legacy endpoint.
    case credential(Credential)
}
