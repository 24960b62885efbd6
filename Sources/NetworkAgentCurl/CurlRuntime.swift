import CCurl
import Foundation

/// The libcurl this process loaded: initialised once, and checked for what ``CurlTransport`` needs.
enum CurlRuntime {
    /// The features the transport needs, with the names its error uses.
    static let requiredFeatures: [(bit: Int32, name: String)] = [
        (Int32(CURL_VERSION_SSL), "SSL"),
        (Int32(CURL_VERSION_HTTP2), "HTTP2"),
        (Int32(CURL_VERSION_ASYNCHDNS), "AsynchDNS"),
    ]

    /// libcurl's version string, e.g. `7.88.1`.
    static let version: String = {
        _ = initialised
        guard let info = curl_version_info(CURLVERSION_NOW_CCURL), let version = info.pointee.version else {
            return "unknown"
        }
        return String(cString: version)
    }()

    /// `nil` when libcurl has every required feature, else the error naming what is missing. Checked once.
    static let availability: CurlTransport.Error? = {
        _ = initialised
        guard let info = curl_version_info(CURLVERSION_NOW_CCURL) else {
            return CurlTransport.Error(missingFeatures: requiredFeatures.map(\.name), libcurlVersion: "unknown")
        }
        return check(features: info.pointee.features, version: version)
    }()

    /// The error for a libcurl with these feature bits, or `nil` when it has everything required.
    static func check(features: Int32, version: String) -> CurlTransport.Error? {
        let missing = requiredFeatures.filter { features & $0.bit == 0 }.map(\.name)
        return missing.isEmpty ? nil : CurlTransport.Error(missingFeatures: missing, libcurlVersion: version)
    }

    /// `curl_global_init`, once per process, before any other libcurl call of this module.
    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
}
