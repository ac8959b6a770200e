import Foundation
import Testing

/// `scripts/serve.sh`, the README's first command, run from another folder as a newcomer would.
@Suite("scripts/serve.sh")
struct ServeScriptTests {
    @Test("relative paths and the default data folder are the caller's, not the repository's")
    func callersFolder() throws {
        let repository = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let caller = FileManager.default.temporaryDirectory.appending(path: "ferry-serve-script-\(UUID())")
        try FileManager.default.createDirectory(at: caller, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: caller) }
        let process = Process()
        process.executableURL = URL(filePath: "/bin/bash")
        process.arguments = [repository.appending(path: "scripts/serve.sh").path(), "--data-dir", "relative-data", "--print-keys"]
        process.currentDirectoryURL = caller
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") }.merging(["FERRY_SERVE_SKIP_BUILD": "1"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(printed.hasPrefix("anon key: "), "\(printed)")
        #expect(FileManager.default.fileExists(atPath: caller.appending(path: "relative-data/keys").path()), "the data folder is the caller's")
        #expect(!FileManager.default.fileExists(atPath: repository.appending(path: "relative-data").path()), "nothing lands in the repository")
    }
}
