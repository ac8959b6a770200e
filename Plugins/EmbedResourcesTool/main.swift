import Foundation

// Writes a Swift file declaring `OpenAPIDocument.yaml` (the first input) and `ConsoleAssets.files` (the others, by
// file name), each file's text as a raw string literal.
let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: EmbedResources OUTPUT OPENAPI [CONSOLE-FILE…]\n".utf8))
    exit(2)
}

/// `text` as a raw string literal whose delimiter is longer than any run of '#' in it, so the text never ends it early.
func literal(_ text: String) -> String {
    var longestRun = 0
    var run = 0
    for character in text {
        run = character == "#" ? run + 1 : 0
        longestRun = max(longestRun, run)
    }
    let hashes = String(repeating: "#", count: longestRun + 1)
    return "\(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)"
}

let openAPI = try String(contentsOfFile: arguments[2], encoding: .utf8)
var consoleEntries: [String] = []
for path in arguments.dropFirst(3).sorted() {
    let name = URL(fileURLWithPath: path).lastPathComponent
    consoleEntries.append("        \"\(name)\": \(literal(try String(contentsOfFile: path, encoding: .utf8))),")
}
let source = """
    // Generated from docs/openapi.yaml and Sources/FerryServer/Console/Assets by the EmbedResources plugin. Do not edit.
    enum OpenAPIDocument {
        static let yaml = \(literal(openAPI))
    }

    enum ConsoleAssets {
        static let files: [String: String] = [
    \(consoleEntries.isEmpty ? "    :" : consoleEntries.joined(separator: "\n"))
        ]
    }

    """
try source.write(toFile: arguments[1], atomically: true, encoding: .utf8)
