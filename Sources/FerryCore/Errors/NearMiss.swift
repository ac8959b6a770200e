/// Suggestions for a mistyped name: `sermon` → "did you mean 'sermons'?".
public enum NearMiss {
    /// The known name closest to `name` within two edits (case ignored), or `nil` when none is that close.
    public static func closest(to name: String, among known: some Sequence<String>) -> String? {
        let target = Array(name.lowercased())
        var best: (name: String, distance: Int)?
        for candidate in known {
            let distance = editDistance(target, Array(candidate.lowercased()))
            if distance <= min(2, max(1, target.count / 3)), distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// `" (did you mean 'x'?)"`, or nothing.
    public static func hint(for name: String, among known: some Sequence<String>) -> String {
        closest(to: name, among: known).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`: `titel` is one from `title`. Long names
    /// are never compared (a suggestion is never for those).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard abs(a.count - b.count) <= 2, a.count < 128, b.count < 128 else { return .max }
        var d = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }
}
