/// The signed-in user's profile and whether it is complete enough to leave onboarding.
///
/// Served by `GET /sync/v1/profile`; `PATCH /sync/v1/profile` with `{"fields": {…}}` updates it and answers the same.
public struct ProfileState: Sendable, Hashable, Codable {
    /// The profile's fields, or `nil` when the user has no profile record (never created, or deleted).
    public var fields: [String: JSONValue]?
    /// The schema's `profile.required` fields that are missing or null; empty when complete.
    public var missing: [String]

    /// Whether every required field is present. A schema that requires none is complete for every user, profile
    /// record or not (the server lists every required field as missing when there is no record).
    public var isComplete: Bool { missing.isEmpty }

    /// Creates a profile state.
    public init(fields: [String: JSONValue]?, missing: [String]) {
        self.fields = fields
        self.missing = missing
    }

    enum CodingKeys: String, CodingKey {
        case fields, missing
        case isComplete = "complete"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fields = try container.decodeIfPresent([String: JSONValue].self, forKey: .fields)
        missing = try container.decode([String].self, forKey: .missing)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(fields, forKey: .fields)
        try container.encode(missing, forKey: .missing)
        try container.encode(isComplete, forKey: .isComplete)
    }
}
