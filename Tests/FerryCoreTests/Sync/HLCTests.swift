import FerryCore
import Foundation
import Testing

@Suite("Hybrid logical clocks and record merge")
struct HLCTests {
    @Test("the wire form round-trips and sorts as the clocks do")
    func wireForm() throws {
        let a = HLC(milliseconds: 1_790_000_000_000, counter: 7, node: "device-a")
        let b = HLC(milliseconds: 1_790_000_000_000, counter: 12, node: "device-a")
        #expect(a.description == "001790000000000-00007-device-a")
        #expect(HLC(a.description) == a)
        #expect(a < b && a.description < b.description, "byte order is clock order")
        for bad in ["", "1-2-x", "001790000000000-00007-", "00179000000000x-00007-n", "001790000000000-00007-bad node", "-00000000000001-00001-n"] {
            #expect(HLC(bad) == nil, "\(bad) is not a clock")
        }
        let decoded = try JSONDecoder().decode([String: HLC].self, from: JSONEncoder().encode(["f": a]))
        #expect(decoded["f"] == a)
    }

    @Test("a clock moves forward when the wall clock stands still, steps back, or a remote clock is ahead")
    func monotonic() {
        var clock = HybridClock(node: "n")
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let first = clock.tick(now: now)
        let second = clock.tick(now: now)
        let third = clock.tick(now: now.addingTimeInterval(-60))
        #expect(first < second && second < third)
        clock.observe(HLC(milliseconds: first.milliseconds + 5000, counter: 3, node: "other"))
        let fourth = clock.tick(now: now)
        #expect(fourth.milliseconds == first.milliseconds + 5000 && fourth.counter == 4 && fourth.node == "n")
    }

    @Test("merge keeps the later clock per field, in any order; a delete wins over concurrent edits; undelete restores")
    func merge() {
        func clock(_ ms: Int64, _ node: String = "a") -> HLC { HLC(milliseconds: ms, counter: 0, node: node) }
        let base = RecordState(fields: ["title": "Draft", "speaker": "A"], clocks: ["title": clock(1), "speaker": clock(1)])
        let edit1 = RecordState(fields: ["title": "Phone"], clocks: ["title": clock(2, "phone")])
        let edit2 = RecordState(fields: ["title": "Tablet", "speaker": "B"], clocks: ["title": clock(3, "tablet"), "speaker": clock(2, "tablet")])
        var one = base, two = base
        one.merge(edit1); one.merge(edit2)
        two.merge(edit2); two.merge(edit1)
        #expect(one == two)
        #expect(one.fields == ["title": "Tablet", "speaker": "B"])
        #expect(one.merge(edit1) == false, "an older or equal change changes nothing")

        var deleted = one
        deleted.merge(RecordState(clocks: ["_deleted": clock(4)], isDeleted: true))
        deleted.merge(RecordState(fields: ["title": "Late edit"], clocks: ["title": clock(5)]))
        #expect(deleted.isDeleted, "an edit never undeletes")
        deleted.merge(RecordState(clocks: ["_deleted": clock(6)], isDeleted: false))
        #expect(!deleted.isDeleted && deleted.fields["title"] == "Late edit")
    }

    @Test("a state never written ends as the field-by-field merge leaves it, whatever the change holds")
    func mergeIntoNew() {
        let (a, b) = (HLC(milliseconds: 1, counter: 0, node: "a"), HLC(milliseconds: 2, counter: 0, node: "b"))
        let changes = [
            RecordState(fields: ["title": "x", "body": "y"], clocks: ["title": a, "body": b]),
            RecordState(fields: ["title": "x"], clocks: ["title": a, "body": b]),  // body cleared: null
            RecordState(fields: ["title": "x", "body": "y"], clocks: ["title": a]),  // body unclocked: not taken
            RecordState(fields: ["title": "x"], clocks: ["title": a, "_deleted": b], isDeleted: true),
            RecordState(fields: ["title": "x"], clocks: ["title": a, "_deleted": b], isDeleted: false),
            RecordState(clocks: ["_deleted": b], isDeleted: true),
            RecordState(fields: ["_deleted": "x"], clocks: ["_deleted": b, "title": a], isDeleted: true),
            RecordState(fields: ["title": "x"], clocks: [:]),
            RecordState(),
        ]
        for change in changes {
            var expected = RecordState()
            for (name, clock) in change.clocks {
                expected.clocks[name] = clock
                if name == RecordState.deletedKey { expected.isDeleted = change.isDeleted } else { expected.fields[name] = change.fields[name] ?? .null }
            }
            var merged = RecordState()
            #expect(merged.merge(change) == !change.clocks.isEmpty)
            #expect(merged == expected, "\(change)")
        }
    }

    @Test("parsing takes exactly 15 and 5 ASCII digits and a node of ASCII letters, digits, - and _", arguments: [
        ("000000000000000-00000-a", true), ("001790000000000-00042-6f1c2a3b-4d5e-4f60-8172-93a4b5c6d7e8", true),
        ("999999999999999-99999-Node_1", true), ("00000000000000-00000-a", false), ("0000000000000000-00000-a", false),
        ("000000000000000-0000-a", false), ("000000000000000-00000-", false), ("00000000000000a-00000-n", false),
        ("+00000000000001-00000-n", false), ("000000000000000-00000-nodé", false), ("000000000000000-00000-a b", false),
        ("٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠-00000-n", false), ("000000000000000_00000-n", false), ("", false),
        ("000000000000000-00000-" + String(repeating: "n", count: 64), true),
        ("000000000000000-00000-" + String(repeating: "n", count: 65), false),
    ])
    func parsing(_ text: String, _ valid: Bool) {
        let clock = HLC(text)
        #expect((clock != nil) == valid)
        if let clock { #expect(clock.description == text, "the wire form round-trips") }
    }
}
