import FerryClient
import FerryTesting
import Foundation
import Testing

@Suite("FileLaunchHistory")
struct FileLaunchHistoryTests {
    @Test("records a launch in a marker file and forgets it on reset")
    func recordAndReset() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let history = FileLaunchHistory(folder: folder.url.appending(path: "state"))
        #expect(!history.hasLaunchedBefore)
        try history.recordLaunch()
        try history.recordLaunch()
        #expect(history.hasLaunchedBefore)
        #expect(FileLaunchHistory(folder: history.folder).hasLaunchedBefore)
        try history.reset()
        try history.reset()
        #expect(!history.hasLaunchedBefore)
    }
}
