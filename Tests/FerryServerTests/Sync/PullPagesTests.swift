@testable import FerryServer
import Foundation
import Testing

/// How a pull's pages of several spaces share its limits.
@Suite("Sync: a pull's limits across spaces")
struct PullPagesTests {
    static func change(seq: Int64, bytes: Int) -> WireChange {
        WireChange(seq: seq, space: UUID(), collection: "notes", pageHeaderBytes: 0, json: ArraySlice(repeating: UInt8(ascii: "x"), count: bytes))
    }

    @Test("a first change larger than the byte cap is kept alone, and no further space is read")
    func oversizedFirstChange() {
        var pages = PullPages(limit: 100, bytes: 1000)
        let page = PullPage(changes: [Self.change(seq: 1, bytes: 5000), Self.change(seq: 2, bytes: 10)], cursor: 2, hasMore: false, resetRequired: false)
        pages.add(page, of: UUID(), after: 0)
        #expect(pages.pages.first?.value.changes.map(\.seq) == [1])
        #expect(pages.pages.first?.value.hasMore == true)
        #expect(pages.remaining == 0, "the next space would be read for a page that can hold nothing")
    }

    @Test("changes within the cap leave the rest of the limit and bytes to the next space")
    func withinTheCap() {
        var pages = PullPages(limit: 100, bytes: 1000)
        pages.add(PullPage(changes: [Self.change(seq: 1, bytes: 100)], cursor: 1, hasMore: false, resetRequired: false), of: UUID(), after: 0)
        #expect(pages.remaining == 99)
        #expect(pages.remainingBytes == 1000 - 101)
    }
}
