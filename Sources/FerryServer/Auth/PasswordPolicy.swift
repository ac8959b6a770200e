/// The minimum strength of a password: long enough, not one character class, not a well-known one.
enum PasswordPolicy {
    static let minimumLength = 8
    static let maximumLength = 256

    /// Supabase's `weak_password.reasons` for `password`; empty when it is acceptable.
    static func weaknesses(of password: String) -> [String] {
        var reasons: [String] = []
        if password.count < minimumLength || password.count > maximumLength { reasons.append("length") }
        let classes = [
            password.contains { $0.isLowercase }, password.contains { $0.isUppercase },
            password.contains { $0.isNumber }, password.contains { !$0.isLetter && !$0.isNumber },
        ].filter { $0 }.count
        if classes < 2 { reasons.append("characters") }
        if commonPasswords.contains(password.lowercased()) { reasons.append("pwned") }
        return reasons
    }

    /// Refuses a weak password with Supabase's `422 weak_password` and its reasons.
    static func require(_ password: String) throws {
        let reasons = weaknesses(of: password)
        guard reasons.isEmpty else { throw ServiceError.weakPassword(reasons) }
    }

    private static let commonPasswords: Set<String> = [
        "password", "password1", "password123", "12345678", "123456789", "1234567890", "qwerty123", "qwertyuiop",
        "iloveyou", "admin123", "welcome1", "letmein1", "abc12345", "passw0rd", "sunshine1", "football1",
    ]
}
