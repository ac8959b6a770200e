import FerryCore
import Foundation
import NIOCore

/// A user's own data as a ZIP of JSON, for a data-portability request (`GET /sync/v1/export` for the signed-in user,
/// `GET /auth/v1/admin/users/{id}/export` for an operator): the account, the profile, the devices, the spaces the user
/// is a member of, every live record of those spaces (one file per collection, rows as `/rest/v1` shows them) and the
/// files the records name. An end-to-end encrypted space's values and files are exported as the server holds them:
/// ciphertext that only the user's devices open.
struct ExportService: Sendable {
    let auth: AuthService
    let tables: TableService
    let devices: any DeviceStorage
    let blobs: any BlobStore
    let schema: Schema
    /// Where archives are written before they are sent, then deleted.
    let folder: String

    /// Writes the archive of `userID`'s data and returns its path; the caller sends it and deletes it.
    func archive(userID: UUID) async throws -> String {
        guard let user = try await auth.storage.user(id: userID) else {
            throw ServiceError(.notFound, .userNotFound, "No user \(userID.lowercasedText).")
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = folder + "/export-\(UUID().lowercasedText).zip"
        do {
            let zip = try ZipWriter(path: path)
            try zip.add("README.txt", data: Data(Self.readme.utf8))
            try zip.add("account.json", data: try Self.json(AuthService.wireUser(user)))
            try zip.add("profile.json", data: try Self.json(try await auth.profile(userID: userID)))
            try zip.add("devices.json", data: try Self.json(try await devices.devices(userID: userID).map { $0.wire(currentDeviceID: nil) }))
            let spaces = try await tables.storage.spaces(userID: userID)
            try zip.add("spaces.json", data: try Self.json(spaces))
            var files: Set<BlobKey> = []
            for collection in schema.collections where !collection.isSystem {
                try await zip.add("records/\(collection.name).json") { write in
                    files.formUnion(try await writeRecords(of: collection, userID: userID, to: write))
                }
            }
            for key in files.sorted(by: { ($0.space.lowercasedText, $0.sha256) < ($1.space.lowercasedText, $1.sha256) }) {
                guard try await blobs.size(of: key) != nil else { continue }
                try await zip.add("files/\(key.space.lowercasedText)/\(key.sha256)") { write in
                    for try await chunk in try await blobs.read(key, from: 0) { try write(Data(chunk.readableBytesView)) }
                }
            }
            try zip.close()
            return path
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
    }

    /// Writes the live records of `collection` in the user's spaces as one JSON array, a page of rows at a time, and
    /// returns the files their blob fields name.
    private func writeRecords(of collection: CollectionDefinition, userID: UUID, to write: (Data) throws -> Void) async throws -> Set<BlobKey> {
        let blobFields = collection.fields.filter { $0.type == .blob }.map(\.name)
        var files: Set<BlobKey> = []
        var offset = 0, first = true
        try write(Data("[".utf8))
        while true {
            let query = try TableQuery(parameters: [("select", "*"), ("order", "id"), ("offset", "\(offset)")])
            let page = try await tables.read(.user(userID), table: collection.name, query: query, countsAll: false)
            for index in 0..<page.rows.count {
                let row = page.rows.row(index)
                try write(Data((first ? [] : [UInt8(ascii: ",")]) + row))
                first = false
                files.formUnion(Self.files(in: row, fields: blobFields))
            }
            offset += page.rows.count
            if page.rows.count < tables.limits.maximumRows { break }
        }
        try write(Data("]".utf8))
        return files
    }

    /// The files a row's blob fields name, read back from the row's JSON.
    private static func files(in row: ArraySlice<UInt8>, fields: [String]) -> Set<BlobKey> {
        guard !fields.isEmpty, let object = JSONValue(jsonText: String(decoding: row, as: UTF8.self))?.objectValue,
              let space = object["_space"]?.stringValue.flatMap(UUID.init(wireText:)) else { return [] }
        return Set(fields.compactMap { field in
            guard let value = object[field], let reference = try? BlobReference(json: value) else { return nil }
            return BlobKey(space: space, sha256: reference.sha256)
        })
    }

    private static func json(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(value)
    }

    static let readme = """
        Your data from this Ferry server.

        account.json    your account (address, sign-in methods, metadata)
        profile.json    your profile
        devices.json    your devices and their trust
        spaces.json     the spaces you are a member of, with your role
        records/        every record of those spaces, one JSON file per collection
        files/          the files those records name, by space and SHA-256

        Records and files of end-to-end encrypted spaces are as the server holds them: encrypted, to be opened
        with the keys on your devices.

        """
}
