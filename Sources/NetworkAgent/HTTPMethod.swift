/// The HTTP method of an endpoint.
///
/// The raw value is uppercased when it is put on the `URLRequest` (`.get` → `GET`).
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    /// `GET`: read a resource.
    case get
    /// `POST`: create a resource or run an action. Not idempotent.
    case post
    /// `PUT`: replace a resource. Idempotent.
    case put
    /// `PATCH`: change part of a resource. Not idempotent.
    case patch
    /// `DELETE`: remove a resource. Idempotent.
    case delete
    /// `HEAD`: like `GET`, headers only.
    case head
    /// `OPTIONS`: ask what a resource supports.
    case options

    /// The method as it appears on the wire, e.g. `"GET"`.
    public var name: String { rawValue.uppercased() }
}
