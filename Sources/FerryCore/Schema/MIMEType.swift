/// A media type (`type/subtype; name=value`) read as RFC 9110 defines it, so an allow-list compares what a browser
/// would act on: `audio/mpeg\ttext/html` or `audio/../text/html` are not audio types, they are not media types at all.
public struct MIMEType: Sendable, Hashable {
    /// The type, lowercased: `audio` of `audio/mpeg`.
    public var type: String
    /// The subtype, lowercased: `mpeg` of `audio/mpeg`.
    public var subtype: String

    /// `type/subtype`, lowercased, without parameters.
    public var essence: String { "\(type)/\(subtype)" }

    /// Parses `text`; `nil` unless it is a type and a subtype of token characters, then only well-formed parameters.
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count <= 255 else { return nil }
        var index = 0
        func token() -> String? {
            let start = index
            while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self).lowercased() : nil
        }
        func skipSpaces() { while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 } }
        guard let type = token(), index < bytes.count, bytes[index] == 0x2F else { return nil }
        index += 1
        guard let subtype = token() else { return nil }
        self.type = type
        self.subtype = subtype
        while true {
            skipSpaces()
            guard index < bytes.count else { return }
            guard bytes[index] == 0x3B else { return nil }
            index += 1
            skipSpaces()
            guard token() != nil, index < bytes.count, bytes[index] == 0x3D else { return nil }
            index += 1
            if index < bytes.count, bytes[index] == 0x22 {
                index += 1
                while index < bytes.count, bytes[index] != 0x22 {
                    guard bytes[index] >= 0x20 || bytes[index] == 0x09, bytes[index] != 0x7F else { return nil }
                    index += bytes[index] == 0x5C ? 2 : 1
                }
                guard index < bytes.count else { return nil }
                index += 1
            } else if token() == nil {
                return nil
            }
        }
    }

    /// Whether this type matches `pattern`: `type/subtype` exactly, or `type/*`.
    public func matches(_ pattern: String) -> Bool {
        let pattern = pattern.lowercased()
        return pattern.hasSuffix("/*") ? type == pattern.dropLast(2) : essence == pattern
    }

    /// Whether a browser may show content of this type inline without running anything: media, plain text and
    /// data. Anything else (HTML, SVG, XML, scripts, unknown types) is served as an attachment.
    public var isInertInBrowsers: Bool {
        switch type {
        case "audio", "video": true
        case "image": subtype != "svg+xml"
        case "text": subtype == "plain" || subtype == "csv"
        case "application": ["octet-stream", "json", "pdf", "zip", "gzip"].contains(subtype)
        default: false
        }
    }

    /// RFC 9110's `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
    }
}
