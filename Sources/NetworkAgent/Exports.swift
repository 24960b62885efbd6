// Re-exported so that code written against the README (`import NetworkAgent` alone) sees `URL`, `URLRequest`,
// `URLResponse` and `JSONDecoder`, as it did with the seed package. On Linux the networking types live in
// FoundationNetworking.
@_exported import Foundation

#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif
