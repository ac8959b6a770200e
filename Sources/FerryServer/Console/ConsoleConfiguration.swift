/// The operator console's settings.
public struct ConsoleConfiguration: Sendable, Hashable {
    /// How often the activity charts read the metrics (a sample per interval, the last 360 kept).
    public var sampleInterval: Duration = .seconds(10)

    public init() {}
}
