import Foundation

/// Prints a command's result: a line for people, or JSON with `--json`.
enum Output {
    static func emit(json: Bool, human: String, _ object: [String: Any?]) {
        if json {
            let cleaned = object.compactMapValues { $0 }
            let data = (try? JSONSerialization.data(withJSONObject: cleaned, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(human)
        }
        fflush(nil)  // a reader of a pipe (`sync --watch`) sees each line as it happens
    }
}
