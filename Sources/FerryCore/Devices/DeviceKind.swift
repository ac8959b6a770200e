/// What sort of machine a device is; the server refuses any other value (`invalid_device`).
public enum DeviceKind: String, Sendable, Hashable, Codable, CaseIterable {
    case macDesktop = "mac-desktop"
    case macLaptop = "mac-laptop"
    case iosPhone = "ios-phone"
    case iosTablet = "ios-tablet"
    case watch = "watchos"
    case vision = "visionos"
    case linux
    case windows
    case androidPhone = "android-phone"
    case androidTablet = "android-tablet"
    case web
    case other
}

/// Whether a device may hold the keys of encrypted spaces.
public enum DeviceTrust: String, Sendable, Hashable, Codable, CaseIterable {
    /// Registered, waiting for a trusted device of the same account to approve it; it is sealed no keys.
    case pending
    /// Approved (or the account's first device); encrypted spaces' keys are sealed to it.
    case trusted
    /// Revoked: its sessions ended, it is refused on every request, and the keys it held were rotated.
    case revoked
}

/// Which APNs environment a push token belongs to.
public enum PushEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    case sandbox
    case production
}
