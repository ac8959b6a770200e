import Foundation

/// Automatic sync: once on open (pull-on-open), then every interval, until the task is cancelled.
///
/// Long-running work lives in ``run(onReport:)``; nothing starts in `init`.
public struct VaultAutoSync: Sendable {
    /// The vault to sync.
    public let vault: Vault
    /// Seconds between syncs (at least ``AutoSyncSettings/minimumInterval``).
    public let interval: Duration
    /// Whether to sync as soon as ``run(onReport:)`` starts.
    public let pullOnOpen: Bool
    /// Options for every sync.
    public let options: SyncOptions

    /// Creates an auto-sync; throws ``VaultError/Code/invalidArgument`` for an interval under the minimum.
    public init(vault: Vault, intervalSeconds: Int, pullOnOpen: Bool = true, options: SyncOptions = SyncOptions()) throws(VaultError) {
        self.vault = vault
        self.interval = .seconds(try AutoSyncSettings.validatedInterval(intervalSeconds))
        self.pullOnOpen = pullOnOpen
        self.options = options
    }

    /// Syncs on open (when set) and then every interval, handing each outcome to `onReport`, until cancelled.
    /// A failed sync is reported and the loop goes on.
    public func run(onReport: @Sendable (Result<VaultSyncReport, VaultError>) async -> Void) async {
        var first = pullOnOpen
        while !Task.isCancelled {
            if !first {
                do { try await Task.sleep(for: interval) } catch { return }
            }
            first = false
            do {
                await onReport(.success(try await vault.sync(options)))
            } catch let error as VaultError {
                await onReport(.failure(error))
            } catch {
                await onReport(.failure(VaultError(.gitFailed, "Sync failed: \(error)")))
            }
        }
    }
}
