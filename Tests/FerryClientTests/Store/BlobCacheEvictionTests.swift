@testable import FerryClient
import FerryCore
import Foundation
import Testing

/// The blob cache evicts the least recently used file first, also when accesses fall within one millisecond (the
/// resolution of its access time): the end-to-end eviction test failed on such a tie, now and then.
@Suite("Store: blob cache eviction order")
struct BlobCacheEvictionTests {
    @Test("accesses and caching again in the same millisecond evict in the order they happened")
    func sameMillisecond() throws {
        // A frozen clock: every access below happens at the same instant.
        let fixture = try StoreFixture(kind: .file)
        let store = fixture.store
        let folder = FileManager.default.temporaryDirectory.appending(path: "ferry-evict-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var references: [BlobReference] = []
        for index in 0..<3 {
            let file = folder.appending(path: "file-\(index)")
            let bytes = Data(repeating: UInt8(index), count: 1024)
            try bytes.write(to: file)
            // The cache files a blob under the hash it is given; any 64 hex digits name one here.
            let reference = BlobReference(sha256: String(repeating: "\(index)", count: 64), size: Int64(bytes.count), contentType: BlobReference.defaultContentType)
            try store.moveIntoCache(file, reference)
            references.append(reference)
        }
        // The first is used again, last: it is the most recently used, the second the least.
        #expect(try store.cachedFile(for: references[0]) != nil)
        // The second is cached again (a download of a file the cache holds), after that: now the most recent of all.
        let again = folder.appending(path: "file-1-again")
        try Data(repeating: 1, count: 1024).write(to: again)
        try store.moveIntoCache(again, references[1])
        #expect(try store.evictBlobs(toFit: 1024) == 2)
        #expect(try store.cachedFile(for: references[1]) != nil)
        #expect(try store.cachedFile(for: references[0]) == nil && store.cachedFile(for: references[2]) == nil)
    }
}
