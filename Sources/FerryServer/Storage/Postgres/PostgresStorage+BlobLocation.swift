import PostgresNIO
import Synchronization

extension PostgresStorage {
    /// Checks that this instance's blob folder (`--blob-dir`, or none) is where the database keeps its blobs, recording
    /// it at the first start (``BlobLocation``). Runs under the schema lock, so instances starting together on a new
    /// database and folder agree on one folder id.
    ///
    /// - Throws: ``ServerStartupError`` (`blob_location_mismatch`) when they disagree.
    func claimBlobLocation(folder: String?) async throws {
        let markerWritten = Mutex(false)
        do {
            try await withStandaloneConnection { connection in
                try await self.transaction(on: connection) {
                    try await self.lockSchema(connection)
                    let recorded = try await connection.query("SELECT value FROM ferry_settings WHERE name = 'blob_store'", logger: self.logger)
                        .decode(String.self).first { _ in true }
                    let namesFiles = try await connection.query("SELECT EXISTS (SELECT 1 FROM ferry_objects)", logger: self.logger)
                        .decode(Bool.self).first { _ in true } ?? false
                    let claimed = try BlobLocation.claim(recorded: recorded, folder: folder, databaseNamesFiles: namesFiles)
                    markerWritten.withLock { $0 = claimed.markerWritten }
                    if claimed.location.recorded != recorded {
                        try await connection.query(
                            "INSERT INTO ferry_settings (name, value) VALUES ('blob_store', \(claimed.location.recorded))", logger: self.logger
                        )
                    }
                }
            }
        } catch {
            // Not recorded after all (the insert or the commit failed): the folder is not this database's yet. A commit
            // whose answer was lost may have stored it, so the record is read again first; unread, the marker stays.
            if let folder, markerWritten.withLock({ $0 }), (try? await isBlobLocationRecorded()) == false {
                BlobLocation.removeMarker(in: folder)
            }
            throw error
        }
    }

    private func isBlobLocationRecorded() async throws -> Bool {
        try await withStandaloneConnection { connection in
            try await connection.query("SELECT EXISTS (SELECT 1 FROM ferry_settings WHERE name = 'blob_store')", logger: self.logger)
                .decode(Bool.self).first { _ in true } ?? false
        }
    }
}
