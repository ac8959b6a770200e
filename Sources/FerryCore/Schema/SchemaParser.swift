import Foundation
import Yams

/// Reads schema files (YAML; JSON is accepted as the YAML subset it is) into a ``Schema``.
///
/// ```yaml
/// collections:
///   sermons:
///     fields:
///       title: text                                  # shorthand: an optional field
///       recorded_at: { type: timestamp, required: true }
///     unique: [[title, recorded_at]]
///   notes:
///     parent: { collection: sermons, field: sermon_id }
///     fields:
///       sermon_id: uuid
///       body: text
/// profile:
///   fields:
///     first_name: text
///   required: [first_name]
/// ```
///
/// Every error names the file, the line and the path inside the document.
public enum SchemaParser {
    /// Reads and merges the given schema files.
    public static func load(files: [String]) throws(SchemaError) -> Schema {
        var documents: [SchemaDocument] = []
        for file in files {
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw SchemaError(file: file, path: "", message: "cannot read the file (\(Self.reason(for: error)))")
            }
            documents.append(try parseDocument(text, file: file))
        }
        return try SchemaDocument.merge(documents)
    }

    /// Parses one schema document held in memory; `file` is the name used in errors.
    public static func parse(_ text: String, file: String = "<schema>") throws(SchemaError) -> Schema {
        try SchemaDocument.merge([parseDocument(text, file: file)])
    }

    static func parseDocument(_ text: String, file: String) throws(SchemaError) -> SchemaDocument {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let YamlError.duplicatedKeysInMapping(duplicates, context) {
            let keys = duplicates.sorted().map { "'\($0)'" }.joined(separator: ", ")
            throw SchemaError(file: file, line: context.mark.line, path: "", message: "\(keys) appears twice in one mapping")
        } catch let error as YamlError {
            throw SchemaError(file: file, line: error.line, path: "", message: "not valid YAML or JSON (\(error.problem))")
        } catch {
            throw SchemaError(file: file, path: "", message: "not valid YAML or JSON")
        }
        guard let root else {
            throw SchemaError(file: file, line: nil, path: "", message: "the file is empty; expected a 'collections' mapping")
        }
        var reader = NodeReader(file: file)
        return try reader.readDocument(root)
    }

    private static func reason(for error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
           let message = String(validatingCString: strerror(Int32(underlying.code))) {
            return message.lowercased()
        }
        return "no such file, or not UTF-8 text"
    }
}

extension YamlError {
    fileprivate var line: Int? {
        switch self {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return mark.line
        default:
            return nil
        }
    }

    fileprivate var problem: String {
        switch self {
        case .scanner(_, let problem, _, _), .parser(_, let problem, _, _), .composer(_, let problem, _, _):
            return problem
        default:
            return "\(self)".split(separator: "\n").first.map(String.init) ?? "unreadable"
        }
    }
}
