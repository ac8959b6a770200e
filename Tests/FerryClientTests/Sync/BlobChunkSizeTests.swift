@testable import FerryClient
import Testing

@Suite("Blob chunk size")
struct BlobChunkSizeTests {
    @Test("a blob chunk is 4 MiB by default, grows to 16 MiB, and both are kept between 64 KiB and 64 MiB")
    func bounds() {
        var configuration = SyncEngine.Configuration()
        #expect(configuration.blobChunkSize == 4 << 20 && configuration.blobChunkSizeLimit == 16 << 20)
        configuration.blobChunkSize = 1
        #expect(configuration.blobChunkSize == 64 << 10)
        configuration.blobChunkSize = 1 << 30
        #expect(configuration.blobChunkSize == 64 << 20)
        configuration.blobChunkSize = 16 << 20
        #expect(configuration.blobChunkSize == 16 << 20)
        configuration.blobChunkSizeLimit = 0
        #expect(configuration.blobChunkSizeLimit == 64 << 10)
        configuration.blobChunkSizeLimit = .max
        #expect(configuration.blobChunkSizeLimit == 64 << 20)
    }

    @Test("a limit set to the chunk keeps every request the same size; a lower limit grows no further")
    func limit() {
        var same = SyncEngine.Configuration()
        same.blobChunkSizeLimit = same.blobChunkSize
        var pacer = same.blobChunks
        pacer.record(bytes: 4 << 20, took: .milliseconds(1))
        #expect(pacer.next == 4 << 20)

        var small = SyncEngine.Configuration()
        small.blobChunkSize = 1 << 20
        small.blobChunkSizeLimit = 2 << 20
        pacer = small.blobChunks
        pacer.record(bytes: 1 << 20, took: .milliseconds(1))
        #expect(pacer.next == 2 << 20)
    }

    @Test("a transfer starts at the configured chunk and grows, at most fourfold a request, to what moves in 2 s, up to 16 MiB")
    func growsOnAFastNetwork() {
        var pacer = BlobChunkPacer(chunkSize: 1 << 20, limit: 16 << 20)
        #expect(pacer.next == 1 << 20)
        pacer.record(bytes: 1 << 20, took: .milliseconds(10))
        #expect(pacer.next == 4 << 20, "fourfold, not the 200 MiB the rate would move in 2 s")
        pacer.record(bytes: 4 << 20, took: .milliseconds(10))
        #expect(pacer.next == 16 << 20)
        pacer.record(bytes: 16 << 20, took: .milliseconds(10))
        #expect(pacer.next == 16 << 20, "never past 16 MiB")
        pacer.record(bytes: 0, took: .seconds(30))
        #expect(pacer.next == 16 << 20, "an empty request says nothing of the rate")
    }

    @Test("a slower network sizes the next request to what its rate moves in 2 s, never below the configured chunk")
    func followsTheRate() {
        var pacer = BlobChunkPacer(chunkSize: 1 << 20, limit: 16 << 20)
        pacer.record(bytes: 1 << 20, took: .milliseconds(1000))
        #expect(pacer.next == 2 << 20, "1 MiB a second: 2 MiB in 2 s")
        pacer.record(bytes: 2 << 20, took: .seconds(8))
        #expect(pacer.next == 1 << 20, "a quarter MiB a second: back to the configured chunk, not below it")
        pacer.record(bytes: 1 << 20, took: .seconds(20))
        #expect(pacer.next == 1 << 20)
    }

    @Test("a configured chunk above 16 MiB is every request's size")
    func largeConfiguredChunk() {
        var pacer = BlobChunkPacer(chunkSize: 32 << 20, limit: 16 << 20)
        pacer.record(bytes: 32 << 20, took: .milliseconds(10))
        #expect(pacer.next == 32 << 20)
        pacer.record(bytes: 32 << 20, took: .seconds(60))
        #expect(pacer.next == 32 << 20)
    }
}
