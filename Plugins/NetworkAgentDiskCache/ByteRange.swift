import Foundation

/// The one byte range a request's `Range` field asks for (RFC 9110 §14.1.2), when it asks for exactly one: the only
/// kind of range request the cache answers from a stored response. Several ranges, other units and invalid fields
/// are left to the origin.
enum ByteRange: Equatable, Sendable {
    /// `first-last` or `first-` (`last` `nil`): the bytes from `first` up to `last` or the end. Positions past
    /// `Int.max` are read as `Int.max`.
    case from(Int, through: Int?)
    /// `-length`: the last `length` bytes.
    case suffix(Int)

    /// Which bytes of a stored body a range selects.
    enum Resolution: Equatable, Sendable {
        /// These bytes: answer 206 (RFC 9110 §15.3.7).
        case bytes(ClosedRange<Int>)
        /// None: answer 416 (RFC 9110 §15.5.17, §14.1.1: no range starts inside the body and no suffix is longer
        /// than 0).
        case unsatisfiable
        /// The whole body, which is empty: answer 200 (a recipient may ignore `Range`, §14.2; an empty 206 cannot
        /// be written).
        case whole
    }

    /// Reads a `Range` field value (RFC 9110 §14.1.1, §14.2): `bytes=` (the unit case-insensitive) and exactly one
    /// `int-range` or `suffix-range`, which may have spaces around it (a list element, §5.6.1).
    ///
    /// - Parameter rangeField: The field value.
    /// - Returns: The range, or `nil` for several ranges, another unit, or an invalid value.
    init?(rangeField: String) {
        guard let equals = rangeField.firstIndex(of: "="), rangeField[..<equals].lowercased() == "bytes" else {
            return nil
        }
        let spec = rangeField[rangeField.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let first = parts[0].isEmpty ? nil : Self.position(parts[0])
        let last = parts[1].isEmpty ? nil : Self.position(parts[1])
        switch (parts[0].isEmpty, parts[1].isEmpty) {
        case (true, false):
            guard let last else { return nil }
            self = .suffix(last)
        case (false, _):
            guard let first, parts[1].isEmpty || (last.map { $0 >= first } ?? false) else { return nil }
            self = .from(first, through: last)
        case (true, true):
            return nil
        }
    }

    /// The bytes the range selects of a body of `length` bytes (RFC 9110 §14.1.2).
    ///
    /// - Parameter length: The length of the stored body.
    /// - Returns: The bytes to send, or why there are none.
    func resolved(length: Int) -> Resolution {
        switch self {
        case .from(let first, let last):
            guard first < length else { return .unsatisfiable }
            return .bytes(first...min(last ?? Int.max, length - 1))
        case .suffix(let count):
            guard count > 0 else { return .unsatisfiable }
            guard length > 0 else { return .whole }
            return .bytes(max(0, length - count)...(length - 1))
        }
    }

    /// A run of ASCII digits as a position, `Int.max` when it is larger; `nil` for anything else.
    private static func position(_ digits: Substring) -> Int? {
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(digits) ?? Int.max
    }
}
