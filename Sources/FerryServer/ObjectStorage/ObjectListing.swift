import FerryCore
import Foundation

/// `POST /object/list/{bucket}`'s body, as storage3 and supabase-js send it.
struct ObjectListRequest: Decodable, Sendable {
    struct SortBy: Decodable, Sendable {
        var column: String?
        var order: String?
    }

    var prefix: String?
    var limit: Int?
    var offset: Int?
    var sortBy: SortBy?
    var search: String?
}

/// One folder level of a bucket, as Storage lists it: the objects directly under the prefix, and the folders below it
/// (entries with a `null` id). The bucket's root lists the spaces the caller belongs to that hold objects; a folder of
/// a space the caller is not in lists nothing, as Storage's row-level security would.
struct ObjectListing: Sendable {
    let storage: ObjectStorageService
    let user: UUID

    func list(bucket: String, request: ObjectListRequest) async throws -> JSONValue {
        _ = try storage.bucket(bucket)
        let limit = request.limit ?? 100
        let offset = request.offset ?? 0
        guard (1...1000).contains(limit), offset >= 0 else {
            throw ServiceError(.invalidRequest, .badRequest, "limit is 1 to 1000 and offset at least 0.")
        }
        let folder = ObjectStorageService.canonicalName((request.prefix ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "/")))
        let prefix = folder.isEmpty ? "" : folder + "/"
        if let first = folder.split(separator: "/").first {
            guard let space = UUID(wireText: String(first)), try await storage.blobs.role(of: user, in: space) != nil else { return [] }
        }
        var files: [StoredObject] = []
        var folders: Set<String> = []
        if prefix.isEmpty {
            // The root: the caller's spaces that hold objects, one probe each (never another space's objects).
            for space in try await storage.blobs.spaces.spaces(userID: user) {
                if try await !storage.catalog.objects(bucket: bucket, prefix: space.id.lowercasedText + "/", limit: 1).isEmpty {
                    folders.insert(space.id.lowercasedText)
                }
            }
        }
        for object in try await prefix.isEmpty ? [] : storage.catalog.objects(bucket: bucket, prefix: prefix, limit: ObjectStorageService.listingScanLimit) {
            let rest = object.name.dropFirst(prefix.count)
            if let slash = rest.firstIndex(of: "/") {
                folders.insert(String(rest[..<slash]))
            } else {
                files.append(object)
            }
        }
        var entries: [(name: String, object: StoredObject?)] = folders.map { ($0, nil) } + files.map { (String($0.name.dropFirst(prefix.count)), $0) }
        if let search = request.search?.lowercased(), !search.isEmpty {
            entries = entries.filter { $0.name.lowercased().contains(search) }
        }
        let descending = request.sortBy?.order?.lowercased() == "desc"
        let column = request.sortBy?.column ?? "name"
        entries.sort { left, right in
            let ordered: Bool
            switch column {
            case "created_at", "updated_at", "last_accessed_at":
                let (a, b) = (Self.date(left.object, column), Self.date(right.object, column))
                ordered = a == b ? left.name < right.name : a < b
            default:
                ordered = left.name < right.name
            }
            return descending ? !ordered : ordered
        }
        return .array(entries.dropFirst(offset).prefix(limit).map { entry in
            guard let object = entry.object else {
                return .object([
                    "name": .string(entry.name), "id": .null, "updated_at": .null, "created_at": .null, "last_accessed_at": .null, "metadata": .null,
                ])
            }
            return .object([
                "name": .string(entry.name), "id": .string(object.id.lowercasedText), "updated_at": .string(Timestamp.format(object.updatedAt)),
                "created_at": .string(Timestamp.format(object.createdAt)), "last_accessed_at": .string(Timestamp.format(object.updatedAt)),
                "metadata": Self.metadata(object),
            ])
        })
    }

    /// Storage's `metadata` of an object.
    static func metadata(_ object: StoredObject) -> JSONValue {
        .object([
            "eTag": .string("\"\(object.sha256)\""), "size": .number(Double(object.size)), "mimetype": .string(object.contentType),
            "cacheControl": .string(object.cacheControl), "lastModified": .string(Timestamp.format(object.updatedAt)),
            "contentLength": .number(Double(object.size)), "httpStatusCode": 200,
        ])
    }

    private static func date(_ object: StoredObject?, _ column: String) -> Date {
        guard let object else { return .distantPast }
        return column == "created_at" ? object.createdAt : object.updatedAt
    }
}
