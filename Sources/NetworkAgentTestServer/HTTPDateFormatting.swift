import Foundation

/// An IMF-fixdate (RFC 9110 §5.6.7), as a `Date`, `Expires` or `Last-Modified` header of a ``ServerResponse``
/// carries it: `Tue, 14 Nov 2023 22:13:20 GMT`. The one formatter of the tests and the benchmarks.
///
/// - Parameter date: The time.
/// - Returns: The date in GMT, formatted with the POSIX locale.
public func httpDate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}
