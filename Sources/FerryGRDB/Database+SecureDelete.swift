import GRDB

extension Database {
    /// Zeroes deleted content only where that writes no page that would be left alone otherwise
    /// (`PRAGMA secure_delete = FAST`), for both SQLite users: the server's database and the device's store.
    ///
    /// Debian's SQLite is built with `SQLITE_SECURE_DELETE` and zeroes every page a delete frees: each acknowledged
    /// outbox batch (whose values the records table holds anyway) was written once more to the WAL and again at the
    /// checkpoint. Deleted rows are no secrecy boundary inside the files (docs/security.md, "Data at rest").
    public func zeroDeletedContentOnlyInWrittenPages() throws {
        try execute(sql: "PRAGMA secure_delete = FAST")
    }
}
