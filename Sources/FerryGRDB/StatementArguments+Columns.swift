import GRDB

extension StatementArguments {
    /// Positional arguments from column values.
    ///
    /// GRDB's `init(_:)` for a sequence of one concrete type maps it through the key path `\.databaseValue`, which an
    /// unspecialised generic instantiates at run time on every call: 40 % of saving a row, by profile. Its
    /// existential form calls a closure instead.
    public init(columns: [DatabaseValue]) {
        self.init(columns.map { Optional<any DatabaseValueConvertible>.some($0) })
    }
}
