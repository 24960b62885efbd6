import CHiredis
import Foundation

/// A Redis reply, copied out of hiredis's reply object.
package enum RedisReply: Sendable, Equatable {
    case string(Data)
    case status(String)
    case integer(Int)
    case null
    case array([RedisReply])
    case error(String)

    /// Copies a hiredis reply (which the caller frees).
    init(_ reply: UnsafeMutablePointer<redisReply>) {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STRING:
            self = .string(value.str.map { Data(bytes: $0, count: Int(value.len)) } ?? Data())
        case REDIS_REPLY_STATUS:
            self = .status(
                value.str.map { String(decoding: Data(bytes: $0, count: Int(value.len)), as: UTF8.self) } ?? ""
            )
        case REDIS_REPLY_ERROR:
            self = .error(
                value.str.map { String(decoding: Data(bytes: $0, count: Int(value.len)), as: UTF8.self) } ?? ""
            )
        case REDIS_REPLY_INTEGER:
            self = .integer(Int(value.integer))
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            items.reserveCapacity(Int(value.elements))
            for index in 0..<Int(value.elements) {
                if let element = value.element?[index] {
                    items.append(RedisReply(element))
                } else {
                    items.append(.null)
                }
            }
            self = .array(items)
        default:
            self = .null
        }
    }
}
