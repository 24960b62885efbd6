import Foundation
import NetworkAgent

/// The directives of a `Cache-Control` header field (RFC 9111 §5.2), request or response.
///
/// Names are case-insensitive; a value is a token or a quoted string (commas inside quotes do not split). The first
/// occurrence of a repeated directive wins (§4.2.1), except `no-cache`, whose occurrences combine: unqualified in
/// any of them is unqualified, the field names of qualified ones add up. A delta-seconds value that is not a
/// non-negative integer is kept as ``Seconds/invalid``, which the policy treats as the most restrictive reading;
/// values past 2^31 are clamped to 2^31 (§1.2.2).
struct CacheControl: Equatable, Sendable {
    /// A delta-seconds argument.
    enum Seconds: Equatable, Sendable {
        /// A valid value, clamped to 2^31.
        case value(Int)
        /// Present, but not a non-negative integer.
        case invalid

        /// The value, or `invalid` read as 0 (the most restrictive reading for every directive that uses it).
        var seconds: Int {
            if case .value(let seconds) = self { return seconds }
            return 0
        }
    }

    /// The largest delta-seconds value a cache must handle (RFC 9111 §1.2.2).
    static let maximumDeltaSeconds = 2_147_483_648

    /// `no-store` (§5.2.1.5, §5.2.2.5).
    var noStore = false
    /// `no-cache` (§5.2.1.4, §5.2.2.4) without field names: validate before every use. An empty list
    /// (`no-cache=""`) counts as this, and so does any qualified `no-cache` in a request.
    var noCache = false
    /// The lowercased field names of a response's qualified `no-cache="a, b"` (or the token form `no-cache=a`),
    /// §5.2.2.4: the response may be reused without validation, but without these fields. Repeated qualified
    /// directives add up; empty when the directive is absent or unqualified.
    var noCacheFields: Set<String> = []
    /// `must-revalidate` (§5.2.2.2).
    var mustRevalidate = false
    /// `must-understand` (§5.2.2.3).
    var mustUnderstand = false
    /// `public` (§5.2.2.9).
    var isPublic = false
    /// `private` (§5.2.2.7), meaningful to shared caches only; a private cache stores such responses.
    var isPrivate = false
    /// `immutable` (RFC 8246): parsed, but without effect. It tells a browser to skip revalidation when the user
    /// reloads; this cache has no reloads of its own, and a request's `no-cache` or `max-age` wins (RFC 9111 §5.2.1).
    var immutable = false
    /// `only-if-cached` (§5.2.1.7).
    var onlyIfCached = false
    /// `max-age` (§5.2.1.1, §5.2.2.1).
    var maxAge: Seconds?
    /// `max-stale` (§5.2.1.2); without a value any staleness is acceptable, kept as 2^31 seconds.
    var maxStale: Seconds?
    /// `min-fresh` (§5.2.1.3).
    var minFresh: Seconds?
    /// `stale-while-revalidate` (RFC 5861 §3).
    var staleWhileRevalidate: Seconds?
    /// `stale-if-error` (RFC 5861 §4), request or response.
    var staleIfError: Seconds?

    init() {}

    /// Parses a field value; unknown directives are ignored (§5.2.3).
    init(_ value: String?) {
        guard let value else { return }
        // Only the directives below are kept, each at its first occurrence: a bit per name says which were seen
        // (a `Set` of every name cost an allocation and a hash per directive of every field parsed).
        var seen: UInt16 = 0
        func first(_ bit: UInt16) -> Bool {
            defer { seen |= bit }
            return seen & bit == 0
        }
        for (name, argument) in Self.directives(in: value) {
            switch name {
            case "no-cache":
                let fields = Self.fieldNames(argument)
                if fields.isEmpty { noCache = true } else { noCacheFields.formUnion(fields) }
            case "no-store": if first(1 << 0) { noStore = true }
            case "must-revalidate": if first(1 << 1) { mustRevalidate = true }
            case "must-understand": if first(1 << 2) { mustUnderstand = true }
            case "public": if first(1 << 3) { isPublic = true }
            case "private": if first(1 << 4) { isPrivate = true }
            case "immutable": if first(1 << 5) { immutable = true }
            case "only-if-cached": if first(1 << 6) { onlyIfCached = true }
            case "max-age": if first(1 << 7) { maxAge = Self.seconds(argument) }
            case "max-stale":
                if first(1 << 8) { maxStale = argument.map { Self.seconds($0) } ?? .value(Self.maximumDeltaSeconds) }
            case "min-fresh": if first(1 << 9) { minFresh = Self.seconds(argument) }
            case "stale-while-revalidate": if first(1 << 10) { staleWhileRevalidate = Self.seconds(argument) }
            case "stale-if-error": if first(1 << 11) { staleIfError = Self.seconds(argument) }
            default: break
            }
        }
        if noCache { noCacheFields = [] }
    }

    /// The request's directives: `Cache-Control`, or `Pragma: no-cache` when there is no `Cache-Control` or this
    /// cache understands none of its directives (RFC 9111 §5.4: Pragma is ignored when `Cache-Control` is "present
    /// and understood").
    init(requestCacheControl: String?, pragma: String?) {
        self.init(requestCacheControl)
        if !noCacheFields.isEmpty {
            // A request's no-cache takes no argument (§5.2.1.4): a qualified one still asks for validation.
            noCache = true
            noCacheFields = []
        }
        if self == CacheControl(), let pragma,
            Self.directives(in: pragma).contains(where: { $0.name == "no-cache" })
        {
            noCache = true
        }
    }

    /// A delta-seconds header value such as `Age` (RFC 9111 §5.1): `nil` when absent or not a non-negative integer.
    static func deltaSeconds(_ text: String?) -> Int? {
        guard let text else { return nil }
        if case .value(let seconds) = seconds(text[...].trimmingWhitespace()) { return seconds }
        return nil
    }

    /// The `Age` field (RFC 9111 §5.1): its first member when it holds a list (`7200, 0` on one line, or two `Age`
    /// lines the transport joined with a comma), or `nil` when it is absent or that member is not a non-negative
    /// integer: §5.1 asks a cache to ignore such a field.
    static func age(_ text: String?) -> Int? {
        guard let text else { return nil }
        let first = text.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return deltaSeconds(String(first))
    }

    /// The lowercased names of a `#field-name` argument (`"a, b"`), without empty members.
    private static func fieldNames(_ argument: String?) -> Set<String> {
        guard let argument else { return [] }
        return Set(
            argument.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                .filter { !$0.isEmpty }
        )
    }

    private static func seconds(_ argument: String?) -> Seconds {
        guard let argument, !argument.isEmpty, argument.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return .invalid
        }
        // Long digit strings overflow Int: anything with more than 10 digits is past 2^31 anyway.
        guard argument.utf8.count <= 10, let value = Int(argument) else { return .value(maximumDeltaSeconds) }
        return .value(min(value, maximumDeltaSeconds))
    }

    /// Splits a field value into lowercased directive names and their unquoted arguments.
    ///
    /// An all-ASCII value (every real one) is split byte by byte (``asciiDirectives(in:)``); others take the
    /// `Character` path, whose trimming and lowercasing cover all of Unicode. Both give the same result for ASCII.
    static func directives(in value: String) -> [(name: String, argument: String?)] {
        if let directives = asciiDirectives(in: value) { return directives }
        return unicodeDirectives(in: value)
    }

    /// ``directives(in:)`` on the bytes of an all-ASCII value, without Foundation's trimming (`NSString`, which
    /// showed in the profile of every cache hit); `nil` when the value has a byte outside ASCII.
    ///
    /// In ASCII, `.whitespaces` is space and tab, and `\r\n` (one `Character`) appends the same two bytes.
    static func asciiDirectives(in value: String) -> [(name: String, argument: String?)]? {
        var value = value
        return value.withUTF8 { bytes -> [(name: String, argument: String?)]? in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
            var result: [(name: String, argument: String?)] = []
            var name: [UInt8] = []
            var argument: [UInt8]?
            var inQuotes = false
            var escaped = false

            func trimmed(_ text: [UInt8]) -> ArraySlice<UInt8> {
                var slice = text[...]
                while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
                while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
                return slice
            }

            func flush() {
                let trimmedName = trimmed(name)
                if !trimmedName.isEmpty {
                    let lowered = trimmedName.map { $0 >= 0x41 && $0 <= 0x5a ? $0 | 0x20 : $0 }
                    result.append(
                        (
                            String(decoding: lowered, as: UTF8.self),
                            argument.map { String(decoding: trimmed($0), as: UTF8.self) }
                        )
                    )
                }
                name.removeAll(keepingCapacity: true)
                argument = nil
            }

            for byte in bytes {
                if inQuotes {
                    if escaped {
                        argument?.append(byte)
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inQuotes = false
                    } else {
                        argument?.append(byte)
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: ","):
                    flush()
                case UInt8(ascii: "=") where argument == nil:
                    argument = []
                case UInt8(ascii: "\"") where argument != nil:
                    inQuotes = true
                default:
                    if argument != nil { argument?.append(byte) } else { name.append(byte) }
                }
            }
            flush()
            return result
        }
    }

    /// ``directives(in:)`` by `Character`, for values with bytes outside ASCII.
    static func unicodeDirectives(in value: String) -> [(name: String, argument: String?)] {
        var result: [(name: String, argument: String?)] = []
        var characters = value.makeIterator()
        var name = ""
        var argument: String?
        var inQuotes = false
        var escaped = false

        func flush() {
            let trimmedName = name.trimmingCharacters(in: .whitespaces).lowercased()
            if !trimmedName.isEmpty {
                let trimmedArgument = argument.map { $0.trimmingCharacters(in: .whitespaces) }
                result.append((trimmedName, trimmedArgument))
            }
            name = ""
            argument = nil
        }

        while let character = characters.next() {
            if inQuotes {
                if escaped {
                    argument?.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inQuotes = false
                } else {
                    argument?.append(character)
                }
                continue
            }
            switch character {
            case ",":
                flush()
            case "=" where argument == nil:
                argument = ""
            case "\"" where argument != nil:
                inQuotes = true
            default:
                if argument != nil { argument?.append(character) } else { name.append(character) }
            }
        }
        flush()
        return result
    }
}
