/// A resolved origin and its source.
public struct OriginResolution: Sendable, Hashable, Codable {
    /// The origin URL, or `nil` when ``source`` is ``OriginSource/none``.
    public var url: String?
    /// Where it came from.
    public var source: OriginSource

    /// Creates a resolution.
    public init(url: String?, source: OriginSource) {
        self.url = url
        self.source = source
    }
}
