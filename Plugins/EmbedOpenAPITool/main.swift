import Foundation

// Writes a Swift file declaring `OpenAPIDocument.yaml` with the contents of the input file.
let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: EmbedOpenAPI INPUT OUTPUT\n".utf8))
    exit(2)
}
let text = try String(contentsOfFile: arguments[1], encoding: .utf8)
// A raw-string delimiter longer than any run of '#' in the text, so the text never ends it early.
var longestRun = 0
var run = 0
for character in text {
    run = character == "#" ? run + 1 : 0
    longestRun = max(longestRun, run)
}
let hashes = String(repeating: "#", count: longestRun + 1)
let source = """
    // Generated from docs/openapi.yaml by the EmbedOpenAPI plugin. Do not edit.
    enum OpenAPIDocument {
        static let yaml = \(hashes)\"\"\"
    \(text)
    \"\"\"\(hashes)
    }

    """
try source.write(toFile: arguments[2], atomically: true, encoding: .utf8)
