import FerryClient
import FerryCore
import FerryTesting
import Foundation
import GRDB
import Testing

/// A store in memory is gone when it is released, its blob cache with it: each one made for a test or a SwiftUI
/// preview used to leave a `ferry-blobs-…` folder in the temporary directory, tens of thousands of them on a
/// developer's machine.
@Suite("Store: the blob cache of a store in memory")
struct InMemoryBlobCacheTests {
    static let schema: Schema = try! SchemaParser.parse("""
        version: 1
        collections:
          recordings:
            fields:
              audio: blob
        """)

    @Test("the cache folder, with the files attached to it, goes when the store is released")
    func removedOnRelease() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.url.appending(path: "recording.m4a")
        try Data(repeating: 7, count: 4096).write(to: file)

        var store: LocalStore? = try LocalStore.inMemory(schema: Self.schema)
        let cache = store!.blobDirectory
        let reference = try store!.attachFile(at: file, contentType: "audio/mp4")
        #expect(try store!.cachedFile(for: reference) != nil)
        store = nil

        #expect(!FileManager.default.fileExists(atPath: cache.path()))
        #expect(FileManager.default.fileExists(atPath: file.path()), "the attached file itself is the app's, and stays")
    }

    @Test("a cache folder the app chose stays when the store is released")
    func chosenFolderStays() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let cache = folder.url.appending(path: "cache")
        var store: LocalStore? = try LocalStore(writer: DatabaseQueue(), schema: Self.schema, blobDirectory: cache)
        #expect(store != nil)
        store = nil
        #expect(FileManager.default.fileExists(atPath: cache.path()))
    }
}
