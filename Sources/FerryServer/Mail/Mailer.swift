import FerryCore
import Foundation
import Logging
import ServiceLifecycle

/// Sends mail in the background: a request enqueues its mail and answers at once; ``run()`` sends each, retrying a
/// failure that may pass (connection, timeout, 4xx) after each of ``MailConfiguration/retryDelays``, and giving up on
/// a permanent one (5xx). Mail never blocks a request, and a queue past its length drops (and logs) rather than grows.
final class Mailer: Service, Sendable {
    private let transport: any MailTransport
    private let retryDelays: [Duration]
    private let logger: Logger
    private let queue: AsyncStream<MailMessage>
    private let continuation: AsyncStream<MailMessage>.Continuation

    init(transport: any MailTransport, configuration: MailConfiguration, logger: Logger) {
        self.transport = transport
        self.retryDelays = configuration.retryDelays
        self.logger = logger
        (queue, continuation) = AsyncStream.makeStream(of: MailMessage.self, bufferingPolicy: .bufferingOldest(configuration.queueLength))
    }

    /// Queues `message`; `false` when the queue is full (the mail is dropped and logged).
    @discardableResult
    func enqueue(_ message: MailMessage) -> Bool {
        if case .dropped = continuation.yield(message) {
            // Not the subject: a template may put the code there.
            logger.error("the mail queue is full; a mail was dropped", metadata: ["ferry.mail.domain": "\(message.to.split(separator: "@").last ?? "")"])
            return false
        }
        return true
    }

    /// Sends until the graceful shutdown, which also cancels mails waiting for a retry (mail is best effort: a code
    /// that never arrives is asked for again).
    func run() async throws {
        await cancelWhenGracefulShutdown { await self.sendAll() }
    }

    private func sendAll() async {
        await withTaskGroup(of: Void.self) { group in
            // Mails are sent a few at a time, so one slow recipient's retries do not hold the others.
            var running = 0
            for await message in queue {
                if running >= 4 {
                    await group.next()
                    running -= 1
                }
                running += 1
                group.addTask { await self.deliver(message) }
            }
        }
    }

    /// Sends one mail with its retries. Recipients are logged by domain only (an SMTP reply can quote the address, so
    /// only its code is logged), and codes never.
    private func deliver(_ message: MailMessage) async {
        for attempt in 0...retryDelays.count {
            do {
                try await transport.send(message)
                return
            } catch {
                let smtp = error as? SMTPError
                let isTransient = smtp?.isTransient ?? true
                let reason = smtp.map { "\($0.code.rawValue)\($0.replyCode.map { " (reply \($0))" } ?? "")" } ?? "\(type(of: error))"
                let metadata: Logger.Metadata = ["ferry.mail.attempt": "\(attempt + 1)", "ferry.mail.domain": "\(message.to.split(separator: "@").last ?? "")"]
                guard isTransient, attempt < retryDelays.count else {
                    logger.error("giving up on a mail: \(reason)", metadata: metadata)
                    return
                }
                logger.warning("sending a mail failed, retrying in \(retryDelays[attempt]): \(reason)", metadata: metadata)
                do { try await Task.sleep(for: retryDelays[attempt]) } catch { return }
            }
        }
    }
}
