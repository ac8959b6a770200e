import FerryServer
import Foundation

extension ServerConfiguration {
    /// scrypt at a low cost (N=2^10), for tests that sign in many times; the OWASP default is tested on its own.
    public mutating func useFastPasswordHashing() {
        auth.passwordHashing = .init(logN: 10, blockSize: 8, parallelism: 1)
    }
}

/// The schemas in the repository's `Examples/` folder, which the tests use as apps would.
public enum ExampleSchemas {
    /// The `Examples/` folder of this checkout.
    public static let folder = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Examples")

    /// The path of `Examples/<name>`.
    public static func path(_ name: String) -> String {
        folder.appending(path: name).path()
    }

    /// The text of `Examples/<name>`.
    public static func text(_ name: String) throws -> String {
        try String(contentsOfFile: path(name), encoding: .utf8)
    }
}
