import Foundation
import Testing

@testable import NetworkAgentDiskCache

/// Parsing `Cache-Control` (RFC 9111 §5.2).
@Suite struct CacheControlTests {
    @Test func directivesAreParsedCaseInsensitively() {
        let control = CacheControl("Max-Age=60, NO-CACHE, must-revalidate, Public, immutable, stale-if-error=5")
        #expect(control.maxAge == .value(60))
        #expect(control.noCache && control.mustRevalidate && control.isPublic && control.immutable)
        #expect(control.staleIfError == .value(5))
        #expect(!control.noStore)
    }

    @Test func quotedArgumentsMayHoldCommas() {
        let control = CacheControl("no-cache=\"Set-Cookie, X-Other\", max-age=\"30\", private")
        #expect(!control.noCache)
        #expect(control.noCacheFields == ["set-cookie", "x-other"])
        #expect(control.maxAge == .value(30))
        #expect(control.isPrivate)
    }

    @Test func theFirstOccurrenceWins() {
        #expect(CacheControl("max-age=10, max-age=99").maxAge == .value(10))
        // Each delta-seconds directive keeps its own first occurrence, whatever else is repeated around it.
        let control = CacheControl(
            "min-fresh=1, max-stale=2, x-unknown=1, stale-while-revalidate=3, stale-if-error=4, max-age=5, "
                + "x-unknown=2, min-fresh=6, max-stale, stale-while-revalidate=7, stale-if-error=8, max-age=9, NO-STORE, no-store"
        )
        #expect(control.minFresh == .value(1))
        #expect(control.maxStale == .value(2))
        #expect(control.staleWhileRevalidate == .value(3))
        #expect(control.staleIfError == .value(4))
        #expect(control.maxAge == .value(5))
        #expect(control.noStore)
    }

    @Test func invalidDeltaSecondsAreKeptAsInvalid() {
        let control = CacheControl("max-age=abc, min-fresh=-1, stale-while-revalidate=")
        #expect(control.maxAge == .invalid)
        #expect(control.maxAge?.seconds == 0)
        #expect(control.minFresh == .invalid)
        #expect(control.staleWhileRevalidate == .invalid)
    }

    @Test func hugeValuesAreClampedTo2Pow31() {
        #expect(CacheControl("max-age=99999999999999999999").maxAge == .value(2_147_483_648))
    }

    @Test func maxStaleWithoutValueMeansAnyStaleness() {
        #expect(CacheControl("max-stale").maxStale == .value(2_147_483_648))
        #expect(CacheControl("max-stale=7").maxStale == .value(7))
    }

    @Test func pragmaNoCacheAppliesOnlyWithoutCacheControl() {
        #expect(CacheControl(requestCacheControl: nil, pragma: "no-cache").noCache)
        #expect(!CacheControl(requestCacheControl: "max-age=5", pragma: "no-cache").noCache)
    }

    @Test func theByteParserAgreesWithTheCharacterParser() {
        let values = [
            "max-age=60", " Max-Age = 60 ,\tNO-CACHE\t", "no-cache=\"Set-Cookie, X-Other\", private",
            "a=\"x\\\"y\", b", "a=\"unterminated, b=1", "=5, , ,x=", "max-age=\"30\"junk, s", "a\r\nb=c\r\n",
            "x=1=2, y=\"\"", "", ",", "\"quoted\"=1",
        ]
        for value in values {
            let bytes = CacheControl.asciiDirectives(in: value)
            let characters = CacheControl.unicodeDirectives(in: value)
            #expect(bytes?.map(\.name) == characters.map(\.name), "\(value)")
            #expect(bytes?.map(\.argument) == characters.map(\.argument), "\(value)")
        }
        #expect(CacheControl.asciiDirectives(in: "max-age=5, ünknown") == nil)
        #expect(CacheControl("max-age=5, ünknown").maxAge == .value(5))
    }

    /// Values made of the bytes that matter to the parser (commas, `=`, quotes, backslashes, spaces, tabs, letters
    /// of both cases), from a fixed seed: the in-place byte parser lists what the character parser lists.
    @Test func theByteParserAgreesWithTheCharacterParserOnGeneratedValues() {
        let alphabet = Array("aZ-,= \t\"\\1mx")
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<3_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(state >> 59)
            var value = ""
            for _ in 0..<length {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                value.append(alphabet[Int(state >> 33) % alphabet.count])
            }
            let bytes = CacheControl.asciiDirectives(in: value)
            let characters = CacheControl.unicodeDirectives(in: value)
            #expect(bytes?.map(\.name) == characters.map(\.name), "\(value)")
            #expect(bytes?.map(\.argument) == characters.map(\.argument), "\(value)")
        }
    }

    @Test func theParsedDirectivesOfValuesWithQuotesAndSpaces() {
        let parsed = CacheControl.asciiDirectives(in: " A = \" x,\\\"y \" z , =1,b=,C,\t\"q\"=2")
        #expect(parsed?.map(\.name) == ["a", "b", "c", "\"q\""])
        #expect(parsed?.map(\.argument) == ["x,\"y  z", "", nil, "2"])
        let controls = CacheControl("No-Store, private=\"no-store, x\", MAX-AGE=5")
        #expect(controls.noStore)
        #expect(controls.maxAge == .value(5))
        #expect(!CacheControl("private=\"no-store\"").noStore)
    }

    @Test func unknownDirectivesAreIgnored() {
        #expect(CacheControl("community=\"UCI\", foo, bar=baz") == CacheControl())
    }
}
