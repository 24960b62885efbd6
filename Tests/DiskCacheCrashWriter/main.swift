// The child process of the disk cache's crash test: opens a DiskStore and writes entries in a loop until it is
// killed. Usage: DiskCacheCrashWriter <directory> <first seed> sync|nosync
//
// Entry `seed` goes to URL `http://crash.test/item/<seed % 64>`; its body is `X-Length` bytes, all equal to
// `X-Fill`, so the test can check that whatever it reads back after a SIGKILL is one whole entry as written.
import Foundation
import NetworkAgentDiskCache

let slots = 64
let arguments = CommandLine.arguments
guard arguments.count == 4, let firstSeed = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: DiskCacheCrashWriter <directory> <first seed> sync|nosync\n".utf8))
    exit(2)
}
let store: DiskStore
do {
    // A small bound, so that writes evict as well.
    store = try DiskStore(
        directory: URL(fileURLWithPath: arguments[1], isDirectory: true),
        maximumBytes: 256 << 10,
        durability: arguments[3] == "sync" ? .powerLoss : .processCrash
    )
} catch {
    FileHandle.standardError.write(Data("cannot open the store: \(error)\n".utf8))
    exit(1)
}
FileHandle.standardOutput.write(Data("ready\n".utf8))

var seed = firstSeed
let retention = EntryRetention(freshFor: .seconds(3_600), staleFor: .zero, hasValidator: false)
while true {
    let url = "http://crash.test/item/\(seed % slots)"
    let length = (seed &* 7_919) % 16_384
    let fill = UInt8(seed % 251)
    let entry = CachedEntry(
        key: CacheKey(method: "GET", url: url, credential: "", varyNames: [], variant: ""),
        responseURL: URL(string: url) ?? URL(fileURLWithPath: "/"),
        statusCode: 200,
        headers: ["X-Seed": "\(seed)", "X-Length": "\(length)", "X-Fill": "\(fill)", "Cache-Control": "max-age=3600"],
        body: Data(repeating: fill, count: length),
        requestDate: Date(),
        responseDate: Date()
    )
    do {
        try store.store(entry, retention: retention)
    } catch {
        FileHandle.standardError.write(Data("write failed: \(error)\n".utf8))
        exit(1)
    }
    seed += 1
}
