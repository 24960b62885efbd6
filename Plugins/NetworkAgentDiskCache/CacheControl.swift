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
        func apply(_ name: String, _ argument: String?) {
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
        if !Self.forEachASCIIDirective(in: value, apply) {
            for (name, argument) in Self.unicodeDirectives(in: value) { apply(name, argument) }
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
        var result: [(name: String, argument: String?)] = []
        guard forEachASCIIDirective(in: value, { result.append(($0, $1)) }) else { return nil }
        return result
    }

    /// Calls `body` with each directive of an all-ASCII value, as ``asciiDirectives(in:)`` lists them, parsing in
    /// place over the value's bytes: a name and an unquoted argument are ranges of them, made into strings once
    /// (most are small strings, without an allocation). Returns `false`, having called nothing, when the value has
    /// a byte outside ASCII.
    ///
    /// A directive is what lies between commas outside quotes; its name, the bytes before its first `=`; its
    /// argument, the bytes after it with the quotes and the escaping backslashes inside quotes left out. Names
    /// and arguments are trimmed of spaces and tabs, names lowercased; empty names are skipped.
    static func forEachASCIIDirective(in value: String, _ body: (String, String?) -> Void) -> Bool {
        var value = value
        return value.withUTF8 { bytes -> Bool in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return false }
            var start = 0  // of the directive
            var equals: Int? = nil  // index of its first `=`
            var quoted = false  // whether its argument had a quote (then it is copied byte by byte)
            var inQuotes = false
            var escaped = false
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if inQuotes {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inQuotes = false
                    }
                } else if byte == UInt8(ascii: ",") {
                    emit(bytes, start: start, equals: equals, end: index, quoted: quoted, body)
                    start = index + 1
                    equals = nil
                    quoted = false
                } else if byte == UInt8(ascii: "="), equals == nil {
                    equals = index
                } else if byte == UInt8(ascii: "\""), equals != nil {
                    inQuotes = true
                    quoted = true
                }
                index += 1
            }
            emit(bytes, start: start, equals: equals, end: bytes.count, quoted: quoted, body)
            return true
        }
    }

    /// One directive of ``forEachASCIIDirective(in:_:)``: `bytes[start..<end]`, its `=` at `equals`.
    private static func emit(
        _ bytes: UnsafeBufferPointer<UInt8>,
        start: Int,
        equals: Int?,
        end: Int,
        quoted: Bool,
        _ body: (String, String?) -> Void
    ) {
        let name = trimmed(bytes, start, equals ?? end)
        guard !name.isEmpty else { return }
        let lowered = String(unsafeUninitializedCapacity: name.count) { buffer in
            for (offset, byte) in name.enumerated() {
                buffer[offset] = byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte
            }
            return name.count
        }
        guard let equals else { return body(lowered, nil) }
        if !quoted { return body(lowered, String(decoding: trimmed(bytes, equals + 1, end), as: UTF8.self)) }
        // A quoted argument: its bytes without the quotes and the escaping backslashes inside them.
        var argument: [UInt8] = []
        var inQuotes = false
        var escaped = false
        for byte in bytes[(equals + 1)..<end] {
            if inQuotes {
                if escaped {
                    argument.append(byte)
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                } else {
                    argument.append(byte)
                }
            } else if byte == UInt8(ascii: "\"") {
                inQuotes = true
            } else {
                argument.append(byte)
            }
        }
        argument.withUnsafeBufferPointer { argumentBytes in
            body(lowered, String(decoding: trimmed(argumentBytes, 0, argumentBytes.count), as: UTF8.self))
        }
    }

    /// `bytes[start..<end]` without leading and trailing spaces and tabs.
    private static func trimmed(
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ start: Int,
        _ end: Int
    ) -> Slice<UnsafeBufferPointer<UInt8>> {
        var start = start
        var end = end
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return bytes[start..<end]
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
