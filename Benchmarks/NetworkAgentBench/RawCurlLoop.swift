import CCurl
import Foundation

/// `curl_overhead`'s baseline: libcurl driven directly, as cheaply as it goes: one thread, one multi handle, one
/// easy handle per request in flight, each set up once and re-added for every transfer. No Swift concurrency per
/// request, no `URLRequest`, no response object: only the checks every scenario makes (status 200 and the byte
/// count).
///
/// The handles live as long as the loop, so connections stay open between runs, as the transport's do.
final class RawCurlLoop: @unchecked Sendable {
    // @unchecked Sendable: the handles and counters are touched only by `run(total:)`'s thread, and runs never
    // overlap: `requestsPerSecond` awaits the end of one before another can start (the callers are on the main
    // actor and await each run), and the handle setup in `init` happens before the first run's thread starts.
    private let multi: UnsafeMutableRawPointer
    private var handles: [UnsafeMutableRawPointer] = []
    /// The body bytes received by each handle's current transfer.
    private let received: UnsafeMutablePointer<Int>
    private let headers: UnsafeMutablePointer<curl_slist>?
    private let expectedBytes: Int

    /// Sets up `concurrency` easy handles for GETs of `url` expecting `expectedBytes` bytes with status 200.
    init(url: URL, concurrency: Int, expectedBytes: Int) throws {
        guard curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK, let multi = curl_multi_init() else {
            throw BenchFailure("libcurl could not be initialised")
        }
        self.multi = multi
        self.expectedBytes = expectedBytes
        received = .allocate(capacity: concurrency)
        received.initialize(repeating: 0, count: concurrency)
        // The same Accept header the provider's requests carry.
        headers = curl_slist_append(nil, "Accept: application/json")
        for index in 0..<concurrency {
            guard let easy = curl_easy_init() else { throw BenchFailure("libcurl could not create an easy handle") }
            handles.append(easy)
            _ = ccurl_easy_setopt_string(easy, CURLOPT_URL, url.absoluteString)
            _ = ccurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
            _ = ccurl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1)
            _ = ccurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headers)
            _ = ccurl_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, rawCurlCount)
            _ = ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, received + index)
        }
    }

    deinit {
        for easy in handles {
            curl_multi_remove_handle(multi, easy)
            curl_easy_cleanup(easy)
        }
        curl_multi_cleanup(multi)
        if let headers { curl_slist_free_all(headers) }
        received.deallocate()
    }

    /// Runs `total` transfers, at most one per handle at a time, on a thread of its own; returns transfers per
    /// second.
    ///
    /// - Throws: ``BenchFailure`` for the first transfer that failed or was not the expected document.
    func requestsPerSecond(total: Int) async throws -> Double {
        let result: Result<Double, BenchFailure> = await withCheckedContinuation { continuation in
            let thread = Thread { [self] in continuation.resume(returning: run(total: total)) }
            thread.name = "raw-libcurl-loop"
            thread.start()
        }
        return try result.get()
    }

    private func run(total: Int) -> Result<Double, BenchFailure> {
        let clock = ContinuousClock()
        let start = clock.now
        var started = 0
        var finished = 0
        var slots: [UnsafeMutableRawPointer: Int] = [:]
        for (index, easy) in handles.enumerated() where started < total {
            slots[easy] = index
            received[index] = 0
            guard curl_multi_add_handle(multi, easy) == CURLM_OK else {
                return .failure(BenchFailure("curl_multi_add_handle failed"))
            }
            started += 1
        }
        var running: Int32 = 0
        var failure: BenchFailure?
        while finished < total && failure == nil {
            curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                    let index = slots[easy]
                else { continue }
                var status = 0
                _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
                let code = message.pointee.data.result
                if code != CURLE_OK || status != 200 || received[index] != expectedBytes {
                    failure = BenchFailure(
                        "raw libcurl transfer: result \(code.rawValue), status \(status), \(received[index]) bytes"
                    )
                }
                curl_multi_remove_handle(multi, easy)
                finished += 1
                if started < total {
                    received[index] = 0
                    curl_multi_add_handle(multi, easy)
                    started += 1
                }
            }
            if finished < total {
                var ready: Int32 = 0
                curl_multi_poll(multi, nil, 0, 1000, &ready)
            }
        }
        // Leave no handle in the multi handle (after a failure some are still running).
        for easy in handles { curl_multi_remove_handle(multi, easy) }
        if let failure { return .failure(failure) }
        return .success(Double(total) / start.duration(to: clock.now).seconds)
    }
}

/// The raw loop's write callback: counts the bytes into the `Int` its handle's `CURLOPT_WRITEDATA` points to.
private let rawCurlCount: ccurl_data_callback = { _, size, count, context in
    let length = size * count
    context?.assumingMemoryBound(to: Int.self).pointee += length
    return length
}
