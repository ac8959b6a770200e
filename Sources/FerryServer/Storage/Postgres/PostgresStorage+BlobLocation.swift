import PostgresNIO

extension PostgresStorage {
    /// Checks that this instance's blob folder (`--blob-dir`, or none) is where the database keeps its blobs, recording
    /// it at the first start (``BlobLocation``). Runs under the schema lock, so instances starting together on a new
    /// database and folder agree on one folder id.
    ///
    /// - Throws: ``ServerStartupError`` (`blob_location_mismatch`) when they disagree.
    func claimBlobLocation(folder: String?) async throws {
        try await withStandaloneConnection { connection in
            try await self.transaction(on: connection) {
                try await self.lockSchema(connection)
                let recorded = try await connection.query("SELECT value FROM ferry_settings WHERE name = 'blob_store'", logger: self.logger)
                    .decode(String.self).first { _ in true }
                let holdsNoBlobs = try await connection.query(
                    "SELECT NOT EXISTS (SELECT 1 FROM ferry_blobs) AND NOT EXISTS (SELECT 1 FROM ferry_blob_uploads)", logger: self.logger
                ).decode(Bool.self).first { _ in true } ?? true
                let location = try BlobLocation.claim(recorded: recorded, folder: folder, databaseHoldsNoBlobs: holdsNoBlobs)
                if location.recorded != recorded {
                    try await connection.query(
                        """
                        INSERT INTO ferry_settings (name, value) VALUES ('blob_store', \(location.recorded))
                        ON CONFLICT (name) DO UPDATE SET value = excluded.value
                        """,
                        logger: self.logger
                    )
                }
            }
        }
    }
}
