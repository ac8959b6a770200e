import FerryCore

extension Timestamp {
    /// `text` as PostgreSQL reads it into a `timestamptz` of a UTC session, for `/rest/v1` filters and bodies alike: a
    /// bare date (`2026-08-01`) is that day's midnight, UTC. Any other text is left for ``parse(_:)`` to judge.
    static func readingBareDate(_ text: String) -> String {
        text.utf8.count == 10 && parse(text + "T00:00:00Z") != nil ? text + "T00:00:00Z" : text
    }
}
