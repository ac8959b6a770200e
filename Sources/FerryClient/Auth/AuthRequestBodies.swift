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
