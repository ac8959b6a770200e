import Foundation

/// The text of each mail Ferry sends: plain and short, replaceable from files.
///
/// A template file's first line is `Subject: …`, the rest is the body. `{{ .Token }}` (the 6-digit code),
/// `{{ .ConfirmationURL }}` (the link), `{{ .TokenHash }}` (the link's token, for `POST /verify`'s `token_hash`),
/// `{{ .Email }}`, `{{ .SiteURL }}` and `{{ .RedirectTo }}` are replaced, as in GoTrue's templates.
struct MailTemplates: Sendable {
    struct Template: Sendable, Hashable {
        var subject: String
        var body: String
    }

    enum Kind: String, CaseIterable, Sendable {
        case signup, magiclink, recovery
        case emailChange = "email_change"
    }

    private var templates: [Kind: Template]

    static let builtIn: [Kind: Template] = [
        .signup: Template(
            subject: "Confirm your address",
            body: "Your confirmation code is {{ .Token }}\n\nOr open this link to confirm {{ .Email }}:\n{{ .ConfirmationURL }}\n\nIf you did not sign up, ignore this mail.\n"
        ),
        .magiclink: Template(
            subject: "Your sign-in code",
            body: "Your sign-in code is {{ .Token }}\n\nOr open this link to sign in:\n{{ .ConfirmationURL }}\n\nIf you did not ask to sign in, ignore this mail.\n"
        ),
        .recovery: Template(
            subject: "Reset your password",
            body: "Your password reset code is {{ .Token }}\n\nOr open this link to reset it:\n{{ .ConfirmationURL }}\n\nIf you did not ask for a reset, ignore this mail; your password stays as it is.\n"
        ),
        .emailChange: Template(
            subject: "Confirm your new address",
            body: "Your code to confirm {{ .Email }} as your new address is {{ .Token }}\n\nOr open this link:\n{{ .ConfirmationURL }}\n\nIf you did not ask for this change, ignore this mail.\n"
        ),
    ]

    /// The built-in templates, each replaced by `<directory>/<kind>.txt` when that file exists.
    init(directory: String?) throws(ServerStartupError) {
        var templates = Self.builtIn
        if let directory {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue else {
                throw ServerStartupError(.invalidConfiguration, "the mail templates folder \(directory) does not exist")
            }
            for kind in Kind.allCases {
                let path = URL(filePath: directory).appending(path: "\(kind.rawValue).txt").path()
                guard FileManager.default.fileExists(atPath: path) else { continue }
                guard let text = try? String(contentsOfFile: path, encoding: .utf8), text.utf8.count <= 64 * 1024 else {
                    throw ServerStartupError(.invalidConfiguration, "the mail template \(path) cannot be read as UTF-8 text of at most 64 KiB")
                }
                let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
                guard let first = lines.first, first.hasPrefix("Subject:") else {
                    throw ServerStartupError(.invalidConfiguration, "the mail template \(path) must start with a line 'Subject: …'")
                }
                let subject = first.dropFirst("Subject:".count).trimmingCharacters(in: .whitespacesAndNewlines)
                templates[kind] = Template(subject: subject, body: lines.count > 1 ? String(lines[1]).trimmingPrefix("\n").description : "")
            }
        }
        self.templates = templates
    }

    /// The mail of `kind` to `email`, with its code and link filled in. `tokenHash` is the link's token, for a template
    /// that builds its own link (`{{ .SiteURL }}/auth/confirm?token_hash={{ .TokenHash }}&type=…`, as Supabase's guides do).
    func message(_ kind: Kind, to email: String, code: String, link: String, siteURL: String, tokenHash: String = "", redirectTo: String = "") -> MailMessage {
        let template = templates[kind] ?? Self.builtIn[kind]!
        func fill(_ text: String) -> String {
            var text = text
            let values = [
                ("Token", code), ("ConfirmationURL", link), ("Email", email), ("SiteURL", siteURL), ("TokenHash", tokenHash),
                ("RedirectTo", redirectTo),
            ]
            for (name, value) in values {
                for spelling in ["{{ .\(name) }}", "{{.\(name)}}"] { text = text.replacingOccurrences(of: spelling, with: value) }
            }
            return text
        }
        return MailMessage(to: email, subject: fill(template.subject), body: fill(template.body))
    }
}
