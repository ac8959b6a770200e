import Foundation

/// A commit message template, as in Obsidian Git: `vault backup: {{date}}`.
///
/// Placeholders: `{{date}}` (UTC, `yyyy-MM-dd HH:mm:ss`), `{{numFiles}}`, `{{hostname}}`, `{{files}}` (the
/// changed paths, comma-separated).
public struct CommitMessageTemplate: Sendable, Hashable {
    /// The default template.
    public static let defaultText = "vault backup: {{date}}"

    /// The template text.
    public var text: String

    /// Creates a template.
    public init(_ text: String = defaultText) {
        self.text = text
    }

    /// The message for `files` changed on `hostname` at `date`.
    public func render(files: [String], hostname: String, date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return text
            .replacingOccurrences(of: "{{date}}", with: formatter.string(from: date))
            .replacingOccurrences(of: "{{numFiles}}", with: String(files.count))
            .replacingOccurrences(of: "{{hostname}}", with: hostname)
            .replacingOccurrences(of: "{{files}}", with: files.joined(separator: ", "))
    }
}
