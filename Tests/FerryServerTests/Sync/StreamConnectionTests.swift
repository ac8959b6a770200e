import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import NIOCore
import Testing

/// The stream's connection as a raw client sees it: the upgrade's answers, the control frames, the heartbeat. The
/// stream is served by a channel handler (no task per stream), so each of its duties is checked here on the wire.
@Suite("Realtime: the stream's connection")
struct StreamConnectionTests {
    static func upgrade(path: String = "/sync/v1/stream", headers: [String: String], key: String? = "dGhlIHNhbXBsZSBub25jZQ==") -> String {
        var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
        if let key { text += "Sec-WebSocket-Key: \(key)\r\n" }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        return text + "\r\n"
    }

    /// A stream opened by a raw client: its connection, and the frames that followed the `101`.
    static func openStream(_ server: LiveServer, _ device: SyncDevice) async throws -> (RawConnection, [RawFrame]) {
        let socket = try RawConnection(port: server.port)
        socket.send(upgrade(headers: ["apikey": server.server.keys.anonKey, "Authorization": "Bearer \(device.session.accessToken)"]))
        let bytes = await socket.receiveBytes(within: .seconds(20), pause: .milliseconds(300))
        let (head, frames) = RawFrame.split(bytes)
        #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
        return (socket, frames)
    }

    @Test("a refused upgrade is answered with the route's JSON error (401 without a key, 503 with Retry-After in a connect storm) and its connection closed",
          arguments: TestEngine.available)
    func refusedUpgrade(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, configure: { $0.useFastPasswordHashing() }) { server in
            let device = try await SyncDevice.signUp(server, "refused")
            let unkeyed = try RawConnection(port: server.port)
            defer { unkeyed.close() }
            unkeyed.send(Self.upgrade(headers: ["Authorization": "Bearer \(device.session.accessToken)"]))
            let answer = await unkeyed.receive(within: .seconds(20))
            #expect(answer.hasPrefix("HTTP/1.1 401") && answer.contains("\"error_code\":\"invalid_api_key\""), "\(answer)")
            #expect(answer.lowercased().contains("connection: close"))
            #expect(await unkeyed.waitForClose(within: .seconds(10)))

            let hub = server.server.hub
            for _ in 0..<hub.limits.maximumOpeningStreams { _ = hub.beginOpening() }
            defer { for _ in 0..<hub.limits.maximumOpeningStreams { hub.endOpening() } }
            let stormed = try RawConnection(port: server.port)
            defer { stormed.close() }
            stormed.send(Self.upgrade(headers: ["apikey": server.server.keys.anonKey, "Authorization": "Bearer \(device.session.accessToken)"]))
            let refusal = await stormed.receive(within: .seconds(20))
            #expect(refusal.hasPrefix("HTTP/1.1 503") && refusal.contains("too_many_streams") && refusal.contains("Retry-After: 1"), "\(refusal)")
            #expect(hub.count == 0)
        }
    }

    @Test("an Upgrade the server does not take (another protocol, no Sec-WebSocket-Key, not the first request) is served as a plain request")
    func otherUpgradesServedPlainly() async throws {
        try await LiveServer.with(.sqlite, configure: { $0.useFastPasswordHashing() }) { server in
            let h2c = try RawConnection(port: server.port)
            defer { h2c.close() }
            h2c.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n")
            let health = await h2c.receive(within: .seconds(20))
            #expect(health.hasPrefix("HTTP/1.1 200") && health.contains("\"status\":\"ok\""), "\(health)")

            let device = try await SyncDevice.signUp(server, "keyless")
            let keyless = try RawConnection(port: server.port)
            defer { keyless.close() }
            keyless.send(Self.upgrade(headers: ["apikey": server.server.keys.anonKey, "Authorization": "Bearer \(device.session.accessToken)"], key: nil))
            let answer = await keyless.receive(within: .seconds(20))
            #expect(answer.hasPrefix("HTTP/1.1 426") && answer.contains("upgrade_required"), "\(answer)")

            // An upgrade as a connection's second request is answered 426 too (it was a 307 to itself).
            let second = try RawConnection(port: server.port)
            defer { second.close() }
            second.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(await second.receive(within: .seconds(20)).hasPrefix("HTTP/1.1 200"))
            second.send(Self.upgrade(headers: ["apikey": server.server.keys.anonKey, "Authorization": "Bearer \(device.session.accessToken)"]))
            let late = await second.receive(within: .seconds(20))
            #expect(late.hasPrefix("HTTP/1.1 426") && late.contains("first request"), "\(late)")
            #expect(server.server.hub.count == 0)
        }
    }

    @Test("a stream sends ready, answers a ping with its pong and a close with a close, then stops counting", arguments: TestEngine.available)
    func controlFrames(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, configure: { $0.useFastPasswordHashing() }) { server in
            let device = try await SyncDevice.signUp(server, "frames")
            let (socket, first) = try await Self.openStream(server, device)
            defer { socket.close() }
            #expect(first.first?.opcode == 0x1 && String(decoding: first.first?.payload ?? [], as: UTF8.self).contains("\"type\":\"ready\""), "\(first)")
            #expect(server.server.hub.count == 1)

            socket.send(bytes: RawFrame(opcode: 0x9, payload: Array("hello".utf8)).masked())
            let pong = RawFrame.split(await socket.receiveBytes(within: .seconds(10), pause: .milliseconds(300)), afterHead: false).frames
            #expect(pong == [RawFrame(opcode: 0xA, payload: Array("hello".utf8))], "\(pong)")

            socket.send(bytes: RawFrame(opcode: 0x8, payload: [0x03, 0xE8]).masked())  // 1000
            let answer = RawFrame.split(await socket.receiveBytes(within: .seconds(10), pause: .milliseconds(300)), afterHead: false).frames
            #expect(answer == [RawFrame(opcode: 0x8, payload: [0x03, 0xE8])], "\(answer)")
            #expect(await socket.waitForClose(within: .seconds(10)), "the server closes the connection after answering the close")
            try await eventually("the stream is still counted") { server.server.hub.count == 0 }
        }
    }

    @Test("a client's close is answered with its code when a peer may send it, with 1002 when not, and with none when it gave none",
          arguments: [
              ([], []), ([0x03, 0xE8], [0x03, 0xE8]), ([0x0F, 0xA0], [0x0F, 0xA0]),  // none; 1000; 4000
              ([0x03], [0x03, 0xEA]), ([0x03, 0xED], [0x03, 0xEA]), ([0x03, 0xF7], [0x03, 0xEA]),  // one byte; 1005; 1015
              ([0x03, 0xE7], [0x03, 0xEA]), ([0x07, 0xD0], [0x03, 0xEA]), ([0x13, 0x88], [0x03, 0xEA]),  // 999; 2000; 5000
              ([0x03, 0xEC], [0x03, 0xEA]), ([0x03, 0xF8], [0x03, 0xEA]), ([0x0B, 0xB7], [0x03, 0xEA]),  // 1004; 1016; 2999
              ([0x03, 0xF4], [0x03, 0xF4]), ([0x03, 0xF6], [0x03, 0xF6]),  // 1012; 1014
              ([0x0B, 0xB8], [0x0B, 0xB8]), ([0x13, 0x87], [0x13, 0x87]),  // 3000; 4999
          ] as [([UInt8], [UInt8])])
    func closeCodes(sent: [UInt8], answered: [UInt8]) {
        let payload = ByteBuffer(bytes: sent.count == 2 ? sent + Array("bye".utf8) : sent)  // a code is followed by its reason
        let code = StreamChannelHandler.answerCode(toClose: payload)
        #expect((code.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } ?? []) == answered)
    }

    @Test("a close whose reason is not UTF-8 is answered with 1007")
    func closeReasonNotUTF8() {
        #expect(StreamChannelHandler.answerCode(toClose: ByteBuffer(bytes: [0x03, 0xE8, 0xC3, 0x28])) == 1007)
        #expect(StreamChannelHandler.answerCode(toClose: ByteBuffer(bytes: [0x03, 0xE8] + Array("au revoir, ça va".utf8))) == 1000)
    }

    @Test("a close with a code no endpoint may send is answered on the wire with 1002, and the connection closed")
    func reservedCloseCode() async throws {
        try await LiveServer.with(.sqlite, configure: { $0.useFastPasswordHashing() }) { server in
            let device = try await SyncDevice.signUp(server, "reserved")
            let (socket, _) = try await Self.openStream(server, device)
            defer { socket.close() }
            socket.send(bytes: RawFrame(opcode: 0x8, payload: [0x03, 0xEE]).masked())  // 1006: never sent in a frame
            let answer = RawFrame.split(await socket.receiveBytes(within: .seconds(10), pause: .milliseconds(300)), afterHead: false).frames
            #expect(answer == [RawFrame(opcode: 0x8, payload: [0x03, 0xEA])], "\(answer)")
            #expect(await socket.waitForClose(within: .seconds(10)))
        }
    }

    @Test("a carried message is framed once, as RFC 6455 frames a server's text message, at every length form", arguments: [5, 125, 126, 300, 65_535, 65_536, 70_000])
    func carriedFrame(length: Int) {
        let text = String(repeating: "x", count: length)
        let message = CarriedMessage(after: 1, seq: 2, bytes: ByteBuffer(string: text))
        let frames = RawFrame.split(Array(message.frame.readableBytesView), afterHead: false).frames
        #expect(frames == [RawFrame(opcode: 0x1, payload: Array(text.utf8))])
        #expect(message.frame.getInteger(at: 0, as: UInt8.self) == 0x81, "final, text, unmasked")
    }

    @Test("a client that answers no ping is disconnected within two heartbeats, and its stream stops counting")
    func unansweredHeartbeat() async throws {
        try await LiveServer.with(.sqlite, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.realtime.heartbeatInterval = .seconds(1)
        }) { server in
            let device = try await SyncDevice.signUp(server, "silent")
            // Timed from before the stream opens: on a loaded machine this task can resume long after the server
            // joined the stream to its heartbeat, and a clock started then measured the close too early.
            let start = ContinuousClock.now
            let (socket, _) = try await Self.openStream(server, device)
            defer { socket.close() }
            #expect(await socket.waitForClose(within: .seconds(20)), "a client that never answered was kept")
            #expect(ContinuousClock.now - start >= .milliseconds(900), "closed before a ping went unanswered")
            try await eventually("the stream is still counted") { server.server.hub.count == 0 }
        }
    }
}

/// A WebSocket frame on the wire (RFC 6455 §5.2), unfragmented.
struct RawFrame: Equatable, CustomStringConvertible {
    var opcode: UInt8
    var payload: [UInt8]

    var description: String { "opcode \(opcode): \(String(decoding: payload, as: UTF8.self))" }

    /// As a client sends it: final, masked.
    func masked() -> [UInt8] {
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        var bytes: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            bytes.append(0x80 | UInt8(payload.count))
        } else {
            bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return bytes
    }

    /// The HTTP head (when `afterHead`) and the server's frames that follow it.
    static func split(_ bytes: [UInt8], afterHead: Bool = true) -> (head: String, frames: [RawFrame]) {
        var index = 0
        var head = ""
        if afterHead {
            let end = (0..<max(0, bytes.count - 3)).first { bytes[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) }
            guard let end else { return (String(decoding: bytes, as: UTF8.self), []) }
            head = String(decoding: bytes[..<end], as: UTF8.self)
            index = end + 4
        }
        var frames: [RawFrame] = []
        while index + 2 <= bytes.count {
            let opcode = bytes[index] & 0x0F
            var length = Int(bytes[index + 1] & 0x7F)
            index += 2
            if length == 126 {
                guard index + 2 <= bytes.count else { break }
                length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
                index += 2
            } else if length == 127 {
                guard index + 8 <= bytes.count else { break }
                length = bytes[index..<index + 8].reduce(0) { $0 << 8 | Int($1) }
                index += 8
            }
            guard index + length <= bytes.count else { break }
            frames.append(RawFrame(opcode: opcode, payload: Array(bytes[index..<index + length])))
            index += length
        }
        return (head, frames)
    }
}
