import FerryClient
import Testing

@Suite("Blob chunk size")
struct BlobChunkSizeTests {
    @Test("a blob chunk is 4 MiB by default and kept between 64 KiB and 64 MiB")
    func bounds() {
        var configuration = SyncEngine.Configuration()
        #expect(configuration.blobChunkSize == 4 << 20)
        configuration.blobChunkSize = 1
        #expect(configuration.blobChunkSize == 64 << 10)
        configuration.blobChunkSize = 1 << 30
        #expect(configuration.blobChunkSize == 64 << 20)
        configuration.blobChunkSize = 16 << 20
        #expect(configuration.blobChunkSize == 16 << 20)
    }
}
