import Foundation

extension Data {
    /// Decodes standard base64 (RFC 4648 §4, `+` and `/`, with `=` padding) in its one canonical spelling;
    /// `nil` for anything else (URL-safe alphabet, missing padding, whitespace, non-zero trailing bits).
    ///
    /// Every value then has exactly one text form, so two encodings of the same bytes never compare unequal.
    init?(canonicalBase64 text: String) {
        guard let data = Data(base64Encoded: text), data.base64EncodedString() == text else { return nil }
        self = data
    }
}
