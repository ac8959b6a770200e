/// Comparisons whose running time does not depend on where two secrets differ.
public enum ConstantTime {
    /// Whether `lhs` and `rhs` hold the same bytes, looking at every byte of the longer one
    /// so that timing reveals neither the position of the first difference nor the secret's prefix.
    public static func isEqual<L: Sequence<UInt8>, R: Sequence<UInt8>>(_ lhs: L, _ rhs: R) -> Bool {
        let left = Array(lhs), right = Array(rhs)
        let length = max(left.count, right.count)
        var difference: UInt8 = left.count == right.count ? 0 : 1
        for index in 0..<length {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0
    }

    /// Whether two strings have the same UTF-8 bytes, in constant time.
    public static func isEqual(_ lhs: String, _ rhs: String) -> Bool {
        isEqual(lhs.utf8, rhs.utf8)
    }
}
