import FerryCore

/// `POST /auth/v1/signup`.
struct SignUpBody: Encodable {
    var email: String
    var password: String
    var data: [String: JSONValue]?
}

/// `POST /auth/v1/token?grant_type=password`.
struct PasswordBody: Encodable {
    var email: String
    var password: String
}

/// `POST /auth/v1/token?grant_type=refresh_token`.
struct RefreshBody: Encodable {
    var refreshToken: String

    enum CodingKeys: String, CodingKey {
        case refreshToken = "refresh_token"
    }
}

/// `PUT /auth/v1/user`.
struct UpdateUserBody: Encodable {
    var password: String?
    var data: [String: JSONValue]?
}

/// `DELETE /auth/v1/user`.
struct DeleteAccountBody: Encodable {
    var currentPassword: String

    enum CodingKeys: String, CodingKey {
        case currentPassword = "current_password"
    }
}

/// `POST /auth/v1/otp` and `POST /auth/v1/recover`.
struct EmailBody: Encodable {
    var email: String
}

/// `PUT /auth/v1/user` with a new address.
struct EmailChangeBody: Encodable {
    var email: String
    var currentPassword: String?

    enum CodingKeys: String, CodingKey {
        case email
        case currentPassword = "current_password"
    }
}

/// `POST /auth/v1/resend`.
struct ResendBody: Encodable {
    var type: String
    var email: String
}

/// `POST /auth/v1/verify` with a mailed code.
struct VerifyBody: Encodable {
    var type: String
    var email: String
    var token: String
}

/// `POST /auth/v1/token?grant_type=id_token`.
struct IDTokenBody: Encodable {
    var provider: String
    var idToken: String
    var nonce: String?
    var data: [String: JSONValue]?

    enum CodingKeys: String, CodingKey {
        case provider, nonce, data
        case idToken = "id_token"
    }
}
