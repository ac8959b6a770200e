import Foundation

extension KeyedDecodingContainer {
    /// An RFC 3339 timestamp (``Timestamp``) at `key`: times on Ferry's wire are strings, never numbers.
    func decodeTimestamp(forKey key: Key) throws -> Date {
        let text = try decode(String.self, forKey: key)
        guard let date = Timestamp.parse(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not an ISO 8601 timestamp")
        }
        return date
    }
}

extension KeyedEncodingContainer {
    /// Writes `date` as the RFC 3339 text ``Timestamp/format(_:)`` makes.
    mutating func encodeTimestamp(_ date: Date, forKey key: Key) throws {
        try encode(Timestamp.format(date), forKey: key)
    }
}
