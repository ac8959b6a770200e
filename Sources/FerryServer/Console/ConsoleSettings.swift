import FerryCore
import Foundation

/// The configuration in force, as the console's settings page shows it: every secret masked, every path and limit as
/// the server reads it.
struct ConsoleSettings {
    let configuration: ServerConfiguration

    init(_ configuration: ServerConfiguration) {
        self.configuration = configuration
    }

    static let mask: JSONValue = "••••"

    var json: JSONValue {
        let c = configuration
        func seconds(_ duration: Duration?) -> JSONValue { duration.map { .number(Double($0.components.seconds)) } ?? .null }
        func secret(_ value: String?) -> JSONValue { value == nil ? .null : Self.mask }
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        return [
            "server": [
                "host": .string(c.host), "port": .number(Double(c.port)), "public_url": text(c.publicURL), "data_directory": .string(c.dataDirectory),
                "blob_directory": text(c.blobDirectory),
                "database": .string(c.resolvedDatabase.description), "schema_files": .array(c.schemaFiles.map(JSONValue.string)),
                "request_deadline_seconds": seconds(c.requestDeadline), "idle_timeout_seconds": seconds(c.idleTimeout),
                "metrics_token": secret(c.metricsToken),
            ],
            "auth": [
                "issuer": .string(c.auth.issuer), "jwt_secret": Self.mask, "access_token_lifetime_seconds": seconds(c.auth.accessTokenLifetime),
                "session_timebox_seconds": seconds(c.auth.sessionTimebox), "session_inactivity_timeout_seconds": seconds(c.auth.sessionInactivityTimeout),
                "sign_in_attempts_per_email": .number(Double(c.auth.signInAttemptsPerEmail)),
                "sign_in_attempts_per_address": .number(Double(c.auth.signInAttemptsPerAddress)),
            ],
            "sync": [
                "maximum_push_bytes": .number(Double(c.sync.maximumPushBytes)), "maximum_batch_length": .number(Double(c.sync.maximumBatchLength)),
                "maximum_record_bytes": .number(Double(c.sync.maximumRecordBytes)), "maximum_pull_limit": .number(Double(c.sync.maximumPullLimit)),
                "tombstone_retention_seconds": seconds(c.sync.tombstoneRetention),
                "maximum_spaces_per_account": .number(Double(c.sync.maximumSpacesPerAccount)),
                "maximum_devices_per_account": .number(Double(c.sync.maximumDevicesPerAccount)),
            ],
            "realtime": [
                "maximum_streams": .number(Double(c.realtime.maximumStreams)),
                "maximum_streams_per_account": .number(Double(c.realtime.maximumStreamsPerAccount)),
                "heartbeat_seconds": seconds(c.realtime.heartbeatInterval),
            ],
            "blobs": [
                "maximum_blob_bytes": .number(Double(c.blobs.maximumBlobBytes)), "retention_seconds": seconds(c.blobs.retention),
                "maximum_stored_bytes_per_account": .number(Double(c.blobs.maximumStoredBytesPerAccount)),
            ],
            "mail": [
                "configured": .bool(c.mail.isConfigured), "smtp_host": text(c.mail.smtp?.host), "smtp_port": c.mail.smtp.map { .number(Double($0.port)) } ?? .null,
                "smtp_username": text(c.mail.smtp?.username), "smtp_password": secret(c.mail.smtp?.password), "sender": text(c.mail.smtp?.sender),
                "confirms_sign_ups": .bool(c.mail.confirmsSignUps), "site_url": text(c.mail.siteURL),
            ],
            "notifications": [
                "enabled": .bool(c.notifications.isEnabled), "topic": text(c.notifications.topic), "key_id": text(c.notifications.keyID),
                "team_id": text(c.notifications.teamID), "key_file": secret(c.notifications.keyFile),
            ],
            "github_oauth": ["configured": .bool(c.githubOAuth.isConfigured), "client_id": text(c.githubOAuth.clientID), "client_secret": secret(c.githubOAuth.clientSecret)],
            "backups": ["every_seconds": seconds(c.backups.interval), "keep": .number(Double(c.backups.keep))],
        ]
    }
}
