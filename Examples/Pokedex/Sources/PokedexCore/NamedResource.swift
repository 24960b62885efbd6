import Foundation

/// A link to another PokeAPI resource: its name and URL. The offline data carries relative URLs
/// (`/api/v2/type/13/`), the live API absolute ones (`https://pokeapi.co/api/v2/type/13/`); both decode.
public struct NamedResource: Codable, Hashable, Sendable {
    /// The resource's name, e.g. `electric`.
    public let name: String
    /// The resource's URL, relative or absolute.
    public let url: String

    /// The numeric id at the end of ``url``, if there is one.
    public var id: Int? {
        url.split(separator: "/").last.flatMap { Int($0) }
    }
}

/// A page of the `/pokemon` (or `/type`) list.
public struct ResourceList: Codable, Sendable {
    /// How many resources there are in all.
    public let count: Int
    /// The absolute URL of the next page, if any.
    public let next: String?
    /// The absolute URL of the previous page, if any.
    public let previous: String?
    /// The resources of this page.
    public let results: [NamedResource]
}
