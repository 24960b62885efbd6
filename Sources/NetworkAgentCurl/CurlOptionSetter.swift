import CCurl

/// What libcurl answered to the options of one transfer.
struct CurlOptionResults {
    /// The first refused option the request cannot go without, and libcurl's result: the request must fail unsent.
    var refused: (option: CURLoption, code: CURLcode)?
    /// Refused options the request goes on without (``CurlOptions/isBestEffort(_:)``), for a log line.
    var ignored: [(option: CURLoption, code: CURLcode)] = []
}

/// Sets options on one easy handle through `ccurl_easy_setopt_*`, keeping every result.
struct CurlOptionSetter {
    let handle: UnsafeMutableRawPointer
    /// Replaces libcurl's result for an option (tests: a libcurl that refuses pinning, as some TLS backends do with
    /// `CURLE_NOT_BUILT_IN`); `nil`, or `nil` from it, keeps libcurl's.
    let override: (@Sendable (CURLoption) -> CURLcode?)?
    private(set) var results = CurlOptionResults()

    init(handle: UnsafeMutableRawPointer, override: (@Sendable (CURLoption) -> CURLcode?)?) {
        self.handle = handle
        self.override = override
    }

    mutating func long(_ option: CURLoption, _ value: Int) {
        record(option, ccurl_easy_setopt_long(handle, option, value))
    }

    /// Sets a string option. libcurl copies the string, so it is lent for the call only: through `withCString`,
    /// which hands over a native string's own bytes, where passing the `String` as the `const char *` argument
    /// made a NUL-terminated array copy of it first (allocations on every request, for the URL).
    mutating func string(_ option: CURLoption, _ value: String) {
        let code = value.withCString { ccurl_easy_setopt_string(handle, option, $0) }
        record(option, code)
    }

    mutating func pointer(_ option: CURLoption, _ value: UnsafeMutableRawPointer?) {
        record(option, ccurl_easy_setopt_pointer(handle, option, value))
    }

    mutating func pointer(_ option: CURLoption, _ value: UnsafeMutablePointer<CChar>) {
        record(option, ccurl_easy_setopt_pointer(handle, option, UnsafeMutableRawPointer(value)))
    }

    mutating func slist(_ option: CURLoption, _ value: UnsafeMutablePointer<curl_slist>?) {
        record(option, ccurl_easy_setopt_slist(handle, option, value))
    }

    mutating func callback(_ option: CURLoption, _ value: ccurl_data_callback) {
        record(option, ccurl_easy_setopt_data_callback(handle, option, value))
    }

    /// Keeps the result of setting `option`.
    mutating func record(_ option: CURLoption, _ code: CURLcode) {
        let result = override?(option) ?? code
        guard result != CURLE_OK else { return }
        if CurlOptions.isBestEffort(option) {
            results.ignored.append((option, result))
        } else if results.refused == nil {
            results.refused = (option, result)
        }
    }
}
