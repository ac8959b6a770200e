/// Where a ``PostLoginSync`` is, for a progress bar: the phase, its own completed / total, a message, and the
/// whole run's fraction (which only grows, and reaches 1 at ``Phase/finished``).
public struct PostLoginProgress: Sendable, Hashable {
    /// The steps, in the order they run.
    public enum Phase: String, Sendable, Hashable, CaseIterable {
        /// Registering (or updating) this device with the account.
        case registeringDevice
        /// Uploading every local change the server does not have yet.
        case pushing
        /// Fetching the account's devices.
        case fetchingDevices
        /// Receiving this device's space keys and sealing the ones it holds to trusted devices that lack them.
        case sealingKeys
        /// Downloading what the other devices wrote.
        case pulling
        /// Done (some steps may have been skipped: see the result).
        case finished
    }

    /// The step.
    public var phase: Phase
    /// Items done in this step.
    public var completed: Int
    /// Items in this step; 0 when unknown (pulling).
    public var total: Int
    /// A message for a person ("Uploading 120 of 700 changes").
    public var message: String
    /// The whole run's progress, 0…1.
    public var fractionCompleted: Double

    /// Creates a progress value.
    public init(phase: Phase, completed: Int, total: Int, message: String, fractionCompleted: Double) {
        self.phase = phase
        self.completed = completed
        self.total = total
        self.message = message
        self.fractionCompleted = fractionCompleted
    }
}
