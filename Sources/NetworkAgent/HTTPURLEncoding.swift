/// How ``HTTPTask/requestAttributes(attributes:encoding:)`` puts its attributes on the request.
///
/// Query strings and form bodies share one encoding, deterministic so that equal endpoints give equal URLs:
/// - keys are sorted; values are stringified (`Bool` as `true`/`false`, numbers as Swift prints them);
/// - an array repeats its key in order: `["id": [1, 2]]` → `id=1&id=2`;
/// - a nested dictionary uses brackets, sorted by key: `["f": ["a": 1]]` → `f%5Ba%5D=1` (`f[a]=1`);
/// - everything but RFC 3986 unreserved characters is percent-encoded, so `+` is sent as `%2B` and a
///   space as `%20`.
public enum HTTPURLEncoding: Sendable, Hashable {
    /// The attributes are the JSON body (`JSONSerialization`, sorted keys). Not allowed on `GET`/`HEAD`.
    case json
    /// The attributes are appended to the URL query (use for `GET`).
    case url
    /// The attributes are an `application/x-www-form-urlencoded` body, labelled so even when the endpoint keeps the
    /// default `Content-Type: application/json` header (another explicit type is kept).
    case form
}
