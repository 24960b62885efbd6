import NetworkAgent

/// An endpoint that names its own metrics route.
///
/// Adopt it when the derived name (the enum case name) is not what you want, for example to use a path template:
///
/// ```swift
/// extension PokeApi: MetricsRouteNaming {
///     var metricsRoute: String {
///         switch self {
///         case .pokemon: "/pokemon/{id}"
///         case .list: "/pokemon"
///         }
///     }
/// }
/// ```
///
/// The route is a metrics label: return one of a small, fixed set of names. Never put ids, query values or the raw
/// URL in it — every distinct value is a new time series in your monitoring system.
public protocol MetricsRouteNaming {
    /// A low-cardinality name for the endpoint, such as `pokemon` or `/pokemon/{id}`.
    var metricsRoute: String { get }
}
