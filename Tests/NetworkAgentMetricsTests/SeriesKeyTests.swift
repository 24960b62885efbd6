import Foundation
import Testing

@testable import NetworkAgentMetrics

/// The registry's route key hashes its labels once; it must file series exactly as the two strings themselves do.
@Suite struct SeriesKeyTests {
    /// The labels as the synthesised `Hashable` of the key saw them before its hash was worked out once.
    struct PlainKey: Hashable {
        let route: String
        let method: String
    }

    /// Route keys and plain keys of the same labels agree on equality and fill dictionaries alike, for labels that
    /// differ in case, by one byte, by their length, and for canonically equivalent spellings ("é" as one scalar
    /// and as "e" plus a combining accent, which `String` compares and hashes as equal).
    @Test func theHashWorkedOutOnceFilesAsTheLabelsDo() {
        let routes = [
            "/users", "/Users", "/users/", "/user", "caf\u{E9}", "cafe\u{301}", "", "overflow", "/a/b/c", "/a/b/d",
            String(repeating: "x", count: 100),
        ]
        let methods = ["GET", "get", "POST", "", "overflow"]
        var routeKeyed: [RouteKey: Int] = [:]
        var plainKeyed: [PlainKey: Int] = [:]
        for step in 0..<2_000 {
            let route = routes[(step * 7) % routes.count]
            let method = methods[(step * 3 + step / routes.count) % methods.count]
            // A copy with storage of its own, so equality cannot rest on shared storage.
            let copiedRoute = String(decoding: Array(route.utf8), as: UTF8.self)
            routeKeyed[RouteKey(route: copiedRoute, method: method), default: 0] += 1
            plainKeyed[PlainKey(route: route, method: method), default: 0] += 1
        }
        #expect(routeKeyed.count == plainKeyed.count)
        for (key, count) in routeKeyed {
            #expect(plainKeyed[PlainKey(route: key.route, method: key.method)] == count)
        }
        for first in routes {
            for second in routes {
                let same = RouteKey(route: first, method: "GET") == RouteKey(route: second, method: "GET")
                #expect(same == (PlainKey(route: first, method: "GET") == PlainKey(route: second, method: "GET")))
            }
        }
        #expect(RouteKey(route: "caf\u{E9}", method: "GET") == RouteKey(route: "cafe\u{301}", method: "GET"))
        #expect(RouteKey(MetricsLabels(route: "/users", method: "GET")) == RouteKey(route: "/users", method: "GET"))
    }
}
