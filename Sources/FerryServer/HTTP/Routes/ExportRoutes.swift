import FerryCore
import FerrySecurity
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `GET /sync/v1/export` (the signed-in user's data) and `GET /auth/v1/admin/users/{id}/export` (any user's, for an
/// operator answering a data-portability request): a ZIP archive, written to the data folder, streamed, then deleted.
/// Outside the request deadline: an account with gigabytes of files takes as long as copying them.
struct ExportRoutes {
    let exports: ExportService

    func register(user group: RouterGroup<AuthenticatedContext>) {
        let exports = self.exports
        group.get("export") { _, context -> Response in
            let path = try await exports.archive(userID: context.caller.userID)
            return try Self.response(path, channel: context.channel)
        }
    }

    func register(admin group: RouterGroup<FerryRequestContext>) {
        let exports = self.exports
        group.get("users/:id/export") { _, context -> Response in
            guard let text = context.parameters.get("id"), let id = UUID(wireText: text) else {
                throw APIError(.notFound, .userNotFound, "No user with that id.")
            }
            let path = try await exports.archive(userID: id)
            return try Self.response(path, channel: context.channel)
        }
    }

    /// The archive as a download, streamed with backpressure; the file is deleted once sent (or once the client left).
    static func response(_ path: String, channel: any Channel) throws -> Response {
        let handle: FileHandle
        let size: Int
        do {
            size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/zip"
        headers[.contentLength] = "\(size)"
        headers[.contentDisposition] = #"attachment; filename="ferry-export-\#(Timestamp.format(Date()).prefix(10)).zip""#
        headers[.cacheControl] = "no-store"
        let pacer = WritePacer(channel: channel, stallTimeout: .seconds(60))
        let file = SendableFile(handle: handle, path: path)
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            defer { file.remove() }
            while let chunk = try file.handle.readChunk(upToCount: 1 << 20) {
                try await writer.write(ByteBuffer(bytes: chunk))
                try await pacer.waitUntilTaken()
            }
            try await writer.finish(nil)
        })
    }

    /// The archive being sent: read by the response's writer, deleted when it is done.
    private struct SendableFile: @unchecked Sendable {
        // One writer task reads the handle, start to end; nothing else touches it.
        let handle: FileHandle
        let path: String

        func remove() {
            try? handle.close()
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}
