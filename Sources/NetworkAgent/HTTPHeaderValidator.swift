import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Checks header names and values before they reach the wire, so that no value can inject a header.
enum HTTPHeaderValidator {
    /// RFC 9110 `tchar`: the characters allowed in a header name or a product token.
    static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9": true
        case "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~": true
        default: false
        }
    }

    /// Throws ``NetworkAgentError/Code/invalidHeader`` unless `name` is a token and `value` has no CR, LF or NUL.
    static func validate(name: String, value: String) throws(NetworkAgentError) {
        guard !name.isEmpty, name.unicodeScalars.allSatisfy(isTokenCharacter) else {
            throw NetworkAgentError(.invalidHeader, "header name \(name.debugDescription) is not an RFC 9110 token")
        }
        guard !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw NetworkAgentError(.invalidHeader, "the value of header \(name) contains CR, LF or NUL")
        }
    }

    /// Validates every header of a request.
    static func validate(_ request: URLRequest) throws(NetworkAgentError) {
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            try validate(name: name, value: value)
        }
    }
}
