/// Which sessions ``AuthClient/signOut(scope:)`` ends, as GoTrue's `POST /auth/v1/logout?scope=` names them.
public enum SignOutScope: String, Sendable, Hashable, CaseIterable {
    /// This device's session only.
    case local
    /// Every session of the user, on every device.
    case global
    /// Every session of the user except this device's, which stays signed in.
    case others
}
